"""Java components from Maven Central, resolved once into a classpath that is cached on disk.

Every component hivewire runs on a JVM beyond pyspark's own jars (the Apache Kafka broker of ``hivewire local``
and the tests, and what the tests and benchmarks compare against) is a profile of ``jvm/pom.xml`` beside this
module, with every version pinned in that file's ``<properties>`` and nowhere else. Nothing is built: Maven's
dependency plugin lists a profile's released artifacts, which Maven keeps in its local repository
(``~/.m2/repository``).

Invariants:

* :func:`resolve` returns the jars of a component from the cache when the cache names them all and they all
  exist, without starting Maven or touching the network; a warm cache works offline.
* The cache is keyed by the pom's digest: changing a version re-resolves, and a stale classpath is never used.
* A cache file is written whole (written aside, then renamed) and only after Maven succeeded; concurrent
  resolutions of one component (two test processes) are serialised by that component's lock file, while
  different components resolve side by side: :func:`main` runs up to :data:`RESOLVE_PARALLEL` Mavens at once,
  since fetching from Central waits on the network far more than it computes (Maven's own resolver
  coordinates two processes downloading the same artifact into ``~/.m2``).
* A missing Maven, or Maven failing, is a :class:`PrerequisiteError` / :class:`HivewireError` naming the
  component, the coordinates and what to do; never a partial classpath.

Test peers (Drone Fly, Apiary 8.x) are profiles that declare the repository ``hivewire-peers``: Maven Central
does not serve them, so they come from a local Maven repository of their releases, :func:`peers_repository`
(``$HIVEWIRE_PEERS_M2``; beside a source checkout, ``../shared/peers/m2`` by default), added beside Central for
those profiles only. Without that repository a peer component is a :class:`PrerequisiteError` naming the
setting; :func:`main` resolves the others and prints one line naming the peers it left out. No hivewire user
needs a peer.

``make jvm`` (which ``make test`` and ``make demo`` run) is ``python -m hivewire.tools._jvm resolve``: it resolves
every component and prints one line each.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from hivewire.errors import HivewireError, PrerequisiteError

#: The file that declares every component (one Maven profile each) and pins every version.
POM = Path(__file__).resolve().parent / "jvm" / "pom.xml"

_NS = {"m": "http://maven.apache.org/POM/4.0.0"}

#: Seconds Maven may take to fetch a component the first time (Spark's Kafka source, Hive: hundreds of MB).
RESOLVE_TIMEOUT = 1800.0

#: How many components :func:`main` resolves at once (each a Maven process, mostly waiting on Central).
RESOLVE_PARALLEL = 4


def cache_dir() -> Path:
    """Where resolved classpaths live: ``$HIVEWIRE_JVM_CACHE``, else ``$XDG_CACHE_HOME/hivewire/jvm`` (``~/.cache``)."""
    given = os.environ.get("HIVEWIRE_JVM_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hivewire" / "jvm"


#: The environment variable (and make's PEERS_M2) naming the peers' Maven repository.
PEERS_ENV = "HIVEWIRE_PEERS_M2"

#: The repository id that marks a profile as a test peer's.
_PEERS_REPOSITORY_ID = "hivewire-peers"


def peers_repository() -> Path | None:
    """The peers' Maven repository: ``$HIVEWIRE_PEERS_M2``, else ``../shared/peers/m2`` beside a source checkout.

    ``None`` when neither names an existing directory.
    """
    given = os.environ.get(PEERS_ENV)
    if given:
        path = Path(given).expanduser().resolve()
    else:
        checkout = POM.parents[4]
        if not (checkout / "pyproject.toml").is_file():
            return None
        path = (checkout.parent / "shared" / "peers" / "m2").resolve()
    return path if path.is_dir() else None


def _pom() -> ElementTree.Element:
    return ElementTree.parse(POM).getroot()


def components() -> list[str]:
    """The names of the components ``jvm/pom.xml`` declares, in its order."""
    return [p.findtext("m:id", default="", namespaces=_NS) for p in _pom().iterfind("m:profiles/m:profile", _NS)]


def peers() -> list[str]:
    """The components that are test peers (their profile declares the peers' repository)."""
    return [
        p.findtext("m:id", default="", namespaces=_NS)
        for p in _pom().iterfind("m:profiles/m:profile", _NS)
        if any(
            r.findtext("m:id", default="", namespaces=_NS) == _PEERS_REPOSITORY_ID
            for r in p.iterfind("m:repositories/m:repository", _NS)
        )
    ]


def version(name: str) -> str:
    """A pinned version from the pom's properties, e.g. ``version("kafka")`` for ``kafka.version``."""
    found = _pom().find(f"m:properties/m:{name}.version", _NS)
    if found is None or not (found.text or "").strip():
        raise HivewireError(f"{POM} pins no {name}.version")
    return (found.text or "").strip()


def _digest() -> str:
    return hashlib.sha256(POM.read_bytes()).hexdigest()[:16]


def _cache_file(component: str) -> Path:
    return cache_dir() / f"{component}-{_digest()}.classpath"


def _cached(component: str) -> list[Path] | None:
    try:
        text = _cache_file(component).read_text()
    except OSError:
        return None
    jars = [Path(entry) for entry in text.split(os.pathsep) if entry.strip()]
    return jars if jars and all(jar.is_file() for jar in jars) else None


def is_resolved(component: str) -> bool:
    """Whether :func:`resolve` would answer from the cache (no Maven, no network)."""
    return _cached(component) is not None


def find_maven() -> str | None:
    """The ``mvn`` to run: ``$MAVEN_HOME/bin/mvn`` when set, else the one on ``PATH``; ``None`` without one."""
    home = os.environ.get("MAVEN_HOME") or os.environ.get("M2_HOME")
    if home and os.access(Path(home) / "bin" / "mvn", os.X_OK):
        return str(Path(home) / "bin" / "mvn")
    return shutil.which("mvn")


def can_resolve(component: str) -> bool:
    """Whether :func:`resolve` can give ``component``: cached already, or Maven is here to fetch it."""
    return is_resolved(component) or find_maven() is not None


@contextlib.contextmanager
def _locked(component: str) -> Iterator[None]:
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / f".{component}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def resolve(component: str) -> list[Path]:
    """The jars of ``component`` (a profile of ``jvm/pom.xml``), from the cache or, the first time, from Maven."""
    if component not in components():
        raise HivewireError(f"no Java component {component!r} in {POM}; known: {', '.join(components())}")
    jars = _cached(component)
    if jars is not None:
        return jars
    with _locked(component):
        jars = _cached(component)  # another process may have resolved it while this one waited
        if jars is not None:
            return jars
        return _run_maven(component)


def _run_maven(component: str) -> list[Path]:
    mvn = find_maven()
    if mvn is None:
        raise PrerequisiteError(
            f"the Java component {component!r} comes from Maven Central, and Maven (mvn) is not installed: install "
            "it (Debian/Ubuntu: apt-get install maven) and run again; it is fetched once and cached in "
            f"{cache_dir()}"
        )
    target = _cache_file(component)
    partial = target.with_suffix(f".{os.getpid()}.partial")
    plugin = f"org.apache.maven.plugins:maven-dependency-plugin:{version('dependency-plugin')}:build-classpath"
    cmd = [mvn, "-B", "-q", "-f", str(POM), "-P", component, plugin, f"-Dmdep.outputFile={partial}"]
    if component in peers():
        repository = peers_repository()
        if repository is None:
            raise PrerequisiteError(
                f"the test peer {component!r} is not on Maven Central: set {PEERS_ENV} (make: PEERS_M2) to the "
                "Maven repository of the peers' releases (../shared/peers/m2 beside a checkout)"
            )
        cmd.append(f"-Dhivewire.peers.url={repository.as_uri()}")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise HivewireError(
            f"Maven did not resolve {component!r} within {RESOLVE_TIMEOUT:.0f} s; is Maven Central reachable? "
            f"({' '.join(cmd)})"
        ) from e
    if done.returncode != 0 or not partial.is_file():
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-25:])
        partial.unlink(missing_ok=True)
        raise HivewireError(
            f"Maven could not resolve the Java component {component!r} (versions pinned in {POM}); is Maven "
            f"Central reachable, or is a pinned release missing from it? Maven said:\n{tail}"
        )
    os.replace(partial, target)
    jars = _cached(component)
    if jars is None:
        raise HivewireError(f"Maven resolved {component!r} but the classpath it wrote names missing jars: {target}")
    return jars


def classpath(component: str) -> str:
    """:func:`resolve`'s jars joined for ``java -cp``."""
    return os.pathsep.join(str(jar) for jar in resolve(component))


def main(argv: list[str]) -> int:
    """``python -m hivewire.tools._jvm resolve [COMPONENT ...]``: resolve (default: every component)."""
    if not argv or argv[0] != "resolve":
        print("usage: python -m hivewire.tools._jvm resolve [COMPONENT ...]", file=sys.stderr)
        return 2
    wanted = argv[1:]
    if not wanted:
        wanted = components()
        if peers_repository() is None:
            left = [c for c in wanted if c in peers() and not is_resolved(c)]
            wanted = [c for c in wanted if c not in left]
            if left:
                print(f"jvm: no peers repository (set {PEERS_ENV}): not resolving {', '.join(left)}", file=sys.stderr)
    failed = False
    with ThreadPoolExecutor(max_workers=RESOLVE_PARALLEL) as pool:
        for future in as_completed([pool.submit(_resolve_line, component) for component in wanted]):
            line, ok = future.result()
            print(line, file=sys.stderr)
            failed = failed or not ok
    return 1 if failed else 0


def _resolve_line(component: str) -> tuple[str, bool]:
    """Resolves ``component``: the line :func:`main` prints for it, and whether it succeeded."""
    cached = is_resolved(component)
    try:
        jars = resolve(component)
    except HivewireError as e:
        return f"jvm: {e}", False
    size = sum(jar.stat().st_size for jar in jars) / 1e6
    how = "cached" if cached else "fetched from Maven Central"
    return f"jvm: {component}: {len(jars)} jars, {size:.0f} MB ({how})", True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
