#!/usr/bin/env bash
# Make sure the machine has what hivewire's demo and tests need outside Python:
#   java 17+   runs the Hive Metastore and ZooKeeper from the pyspark wheel's jars (demo and tests)
#   thrift     Debian's thrift-compiler, only to check the committed generated code (tests: --with-thrift)
# As root on Debian/Ubuntu a missing one is installed with apt-get; otherwise this fails and says what to do.
set -euo pipefail
want_thrift=0
[ "${1:-}" = "--with-thrift" ] && want_thrift=1

have_java17() {
  local java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
  command -v "$java" >/dev/null 2>&1 || return 1
  local v
  v=$("$java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
  [ -n "$v" ] && [ "$v" -ge 17 ]
}

apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "prereqs: installing $* with apt-get" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    return 1
  fi
}

if ! have_java17; then
  apt_install openjdk-17-jre-headless || true
  if ! have_java17; then
    echo "prereqs: Java 17 or newer is required (the local Hive Metastore and ZooKeeper run on it)." >&2
    echo "         Install it, e.g. 'sudo apt-get install openjdk-17-jre-headless', or set JAVA_HOME." >&2
    exit 1
  fi
fi

if [ "$want_thrift" = 1 ] && ! command -v thrift >/dev/null 2>&1; then
  apt_install thrift-compiler || true
  if ! command -v thrift >/dev/null 2>&1; then
    echo "prereqs: the Thrift compiler is required by the test that checks thrift/hivewire_thrift" >&2
    echo "         against idl/. Install Debian's thrift-compiler: 'sudo apt-get install thrift-compiler'." >&2
    exit 1
  fi
fi
