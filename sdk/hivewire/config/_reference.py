"""``docs/configuration.md``, rendered from the key declarations (:mod:`hivewire.config._keys`).

Regenerate it with ``python -m hivewire.config._reference docs/configuration.md``;
``tests/unit/test_config_keys.py`` fails while the committed file differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hivewire.config._kafka import JAVA_CONSUMER_RENAMED, JAVA_ONLY_CONSUMER_KEYS
from hivewire.config._key import Key
from hivewire.config._keys import CHECKED_NAMESPACES, KEYS, PREFIXES, SECTIONS

REGENERATE = "python -m hivewire.config._reference docs/configuration.md"

_INTRO = f"""\
# Configuration reference

<!-- Generated from sdk/hivewire/config/_keys/: do not edit; run `{REGENERATE}`. -->

Every key hivewire reads, for `hivewire run`, `shim`, `archive` and `register`, `App.run` and the metastore
client. Each command takes `--config FILE`: a `.properties` file (Drone Fly's, unchanged), a `.toml` file
(tables nest the dotted keys) or a Hadoop `.xml` file such as `hive-site.xml`; YAML and JSON files are refused.

**Sources**, later ones winning: the defaults below, the app's own settings (`hw.App(config={{...}})`), the
`--config` file, environment variables, and flags (each flag sets one key; `--set KEY=VALUE` any). A key's
aliases count as the key: a flag wins over a file whatever spelling each uses, and within one source the key's
name wins over its aliases, in the order listed (Hive's).

**Environment variables**: the key in upper case with dots as underscores (`APIARY_BOOTSTRAP_SERVERS` for
`apiary.bootstrap.servers`), as Spring maps them for Drone Fly. Only variables that map to keys under
`apiary.`, `instance.`, `endpoint.`, `hivewire.`, `metastore.`, `hive.metastore.` and `hive.zookeeper.` are read.

**Unknown keys** under {", ".join(f"`{n}*`" for n in CHECKED_NAMESPACES)} (hivewire's and Drone Fly's
namespaces; not under the pass-through prefixes) stop the command with a "did you mean". From environment
variables they are ignored (Kubernetes sets `<SERVICE>_SERVICE_HOST`, `<SERVICE>_PORT`, ... for every Service),
and logged: at WARNING when one looks like a typo of a key. Keys of other programs (`hive.*`, a listener's own
settings) are left alone.

**Values**: blanks around a value are dropped and an empty value counts as unset. Times take Hive's units
(`15s`, `2m`, `120000ms`, `1d`); a bare number is in the unit the type names. Flags are `true` or `false`.
Errors name the key as it was written (an alias, a flag) and say what is expected.

**Secrets** (keys of type *secret*, *scheme:credential list*, the register ACL, and pass-through keys whose name
holds `password`, `secret`, `token`, `jaas` or `credentials`, such as
`apiary.messaging.consumer.sasl.password`) are never shown (`***`) and are masked in log lines, kazoo's
included. Each also takes `file:PATH`, the content of that file without its trailing newline (a Kubernetes or
Docker secret), or `env:NAME`, the value of that environment variable: a password given on the command line is
readable by every local user from `/proc`, a path is not. Errors name the file or the variable, never a value.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(key: Key[object]) -> str:
    if key.default_doc is not None:
        return key.default_doc
    return "" if key.default is None else f"`{key.default}`"


def _meaning(key: Key[object]) -> str:
    text = key.doc
    if key.aliases:
        text += " Also read as " + ", ".join(f"`{a}`" for a in key.aliases) + "."
    return _cell(text)


def render() -> str:
    """The configuration reference, as Markdown."""
    out = [_INTRO]
    for section in SECTIONS:
        out.append(f"## {section.title}\n\n{section.intro}\n")
        out.append("| key | type | default | environment variable | meaning |\n|---|---|---|---|---|")
        for key in KEYS:
            if key.section is section:
                out.append(
                    f"| `{key.name}` | {_cell(key.kind.describe())} | {_cell(_default(key))} | `{key.env}` | "
                    f"{_meaning(key)} |"
                )
        for prefix in PREFIXES:
            if prefix.section is section:
                out.append(f"| `{prefix.name}*` | passed through | | | {_cell(prefix.doc)} |")
        out.append("")
    out.append(
        "## Drone Fly's Java consumer properties\n\n"
        "Drone Fly hands `apiary.messaging.consumer.*` to Java's `KafkaConsumer`; hivewire hands them to "
        "librdkafka, which knows most of them by the same name. `max.poll.records` sets "
        "`hivewire.consumer.batch.size` (when that key is not given), assignor class names become librdkafka's "
        "strategy names, `auto.offset.reset=none` becomes `error`, an empty "
        "`ssl.endpoint.identification.algorithm` turns host name checks off, `sasl.jaas.config` for PLAIN, SCRAM "
        "and Kerberos becomes `sasl.username`/`sasl.password` or the keytab and principal, and a PEM trust store "
        "(`ssl.truststore.type=PEM`) `ssl.ca.location`. Everything else passes as it is, and a value librdkafka "
        "refuses stops the start with an error naming the key.\n"
    )
    out.append("| Java property | librdkafka property |\n|---|---|")
    out.extend(f"| `{java}` | `{native}` |" for java, native in sorted(JAVA_CONSUMER_RENAMED.items()))
    out.append(
        "\nIgnored, with one WARNING naming them (Java classes, JVM security providers, JKS stores, client metrics, "
        "login refresh tuning): " + ", ".join(f"`{k}`" for k in sorted(JAVA_ONLY_CONSUMER_KEYS)) + ".\n"
    )
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover - the regeneration command
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    if target is None:
        sys.stdout.write(render())
    else:
        target.write_text(render(), encoding="utf-8")
