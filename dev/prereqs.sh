#!/usr/bin/env bash
# Make sure the machine has what hivewire's demo and tests need outside Python:
#   venv       $PYTHON (default python3) 3.10+ able to create a virtualenv (--python: only this check)
#   java 17+   runs the Hive Metastore and ZooKeeper from the pyspark wheel's jars (demo and tests)
#   thrift     Debian's thrift-compiler, only to check the committed generated code (tests: --with-thrift)
#   maven      fetches the Java components (Apache Kafka, ...) from Maven Central once (make jvm: --with-maven;
#              the tests too)
#   javac      a JDK 17+, only for the tests (--with-thrift): they compile a Java MetaStoreEventListener, the
#              oracle of what the metastore itself fires
# As root on Debian/Ubuntu a missing one is installed with apt-get; otherwise this fails and says what to do.
# A missing C compiler or Python headers is only a warning: thrift then runs without its C extension; a missing
# cargo too: hivewire's native event decoder is not built and the Python one decodes.
set -euo pipefail
want_thrift=0 only_python=0 want_maven=0
[ "${1:-}" = "--with-thrift" ] && want_thrift=1 && want_maven=1
[ "${1:-}" = "--with-maven" ] && want_maven=1
[ "${1:-}" = "--python" ] && only_python=1
python=${PYTHON:-python3}

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

python_ok() {
  "$python" -c 'import sys; assert sys.version_info >= (3, 10)' 2>/dev/null
}
venv_ok() {
  "$python" -c 'import ensurepip, venv' 2>/dev/null
}
if ! command -v "$python" >/dev/null 2>&1 || ! python_ok; then
  echo "prereqs: Python 3.10 or newer is required as '$python' (set PYTHON=/path/to/python3.x to choose one)." >&2
  exit 1
fi
if ! venv_ok; then
  # Debian and Ubuntu split venv and ensurepip out of their python3 package.
  minor=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  apt_install "python${minor}-venv" || apt_install python3-venv || true
  if ! venv_ok; then
    echo "prereqs: '$python' cannot create virtualenvs (no venv/ensurepip module)." >&2
    echo "         On Debian/Ubuntu: 'sudo apt-get install python${minor}-venv'." >&2
    exit 1
  fi
fi
if ! command -v cc >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1 \
   || ! "$python" -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
  echo "prereqs: warning: no C compiler or no Python headers: pip cannot build thrift's C extension, so" >&2
  echo "         hivewire will run its Thrift (de)serialisation in pure Python, several times slower." >&2
  echo "         On Debian/Ubuntu: 'sudo apt-get install gcc python3-dev', then reinstall (see README)." >&2
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "prereqs: warning: no cargo (Rust): pip cannot build hivewire's native event decoder (native/), so" >&2
  echo "         hivewire.arrow decodes messages in Python, several times slower (hivewire.arrow.ACCELERATED)." >&2
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    echo "         rustup's cargo is in ~/.cargo/bin: 'export PATH=\"\$HOME/.cargo/bin:\$PATH\"', then reinstall." >&2
  else
    echo "         Install Rust with rustup (https://rustup.rs), then reinstall (see README)." >&2
  fi
fi
[ "$only_python" = 1 ] && exit 0

if ! have_java17; then
  apt_install openjdk-17-jre-headless || true
  if ! have_java17; then
    echo "prereqs: Java 17 or newer is required (the local Hive Metastore and ZooKeeper run on it)." >&2
    echo "         Install it, e.g. 'sudo apt-get install openjdk-17-jre-headless', or set JAVA_HOME." >&2
    exit 1
  fi
fi

have_javac17() {
  local javac="${JAVA_HOME:+$JAVA_HOME/bin/}javac"
  command -v "$javac" >/dev/null 2>&1 || return 1
  local v
  v=$("$javac" -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p' | head -n1)
  [ -n "$v" ] && [ "$v" -ge 17 ]
}
if [ "$want_thrift" = 1 ] && ! have_javac17; then
  apt_install openjdk-17-jdk-headless || true
  if ! have_javac17; then
    echo "prereqs: the tests compile a small Java metastore listener and need a JDK 17+ (javac)." >&2
    echo "         Install one, e.g. 'sudo apt-get install openjdk-17-jdk-headless', or set JAVA_HOME." >&2
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

if [ "$want_maven" = 1 ] && ! command -v mvn >/dev/null 2>&1 && [ -z "${MAVEN_HOME:-}" ]; then
  apt_install maven || true
  if ! command -v mvn >/dev/null 2>&1; then
    echo "prereqs: Maven (mvn) fetches Apache Kafka and the other Java components from Maven Central once." >&2
    echo "         Install it: 'sudo apt-get install maven' (or set MAVEN_HOME)." >&2
    exit 1
  fi
fi
