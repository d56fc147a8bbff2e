"""The text ``perfmodel probe`` writes: the platform YAML (catalog layout, with what could not be read
and what to fill as comments on top) and the summary it prints."""

from __future__ import annotations

import yaml

from perfmodel.inputs.probe.assemble import Draft

#: the order of a platform entry's keys in the file (the catalog's README order)
ORDER = (
    "id",
    "name",
    "vendor",
    "model",
    "cpu_model",
    "arch",
    "microarchitecture",
    "sockets",
    "cores_per_socket",
    "cores",
    "threads_per_core",
    "smt_modes",
    "threads",
    "numa_nodes",
    "base_ghz",
    "turbo_ghz",
    "l3_mib",
    "ram_gib",
    "network",
    "storage",
    "notes",
    "sources",
)


class _Dumper(yaml.SafeDumper):
    """Block style, but a storage slot or SMT mode list on one line."""


def _flow_small(dumper: yaml.SafeDumper, data):
    flow = all(not isinstance(v, dict | list) for v in (data.values() if isinstance(data, dict) else data))
    tag = "tag:yaml.org,2002:map" if isinstance(data, dict) else "tag:yaml.org,2002:seq"
    items = data.items() if isinstance(data, dict) else data
    if isinstance(data, dict):
        return dumper.represent_mapping(tag, items, flow_style=flow and len(data) <= 3)
    return dumper.represent_sequence(tag, items, flow_style=flow)


_Dumper.add_representer(dict, _flow_small)
_Dumper.add_representer(list, _flow_small)


def _comment(lines: list[str]) -> list[str]:
    return [f"#   - {line}" for line in lines]


def to_yaml(draft: Draft) -> str:
    """The platform file: a catalog YAML defining one platform (and its own network if any),
    headed by comments listing the drives and NICs found, what could not be read and what to
    fill in before the file loads."""
    entry = {k: draft.entry[k] for k in ORDER if k in draft.entry}
    entry |= {k: v for k, v in draft.entry.items() if k not in entry}
    doc: dict = {"references": dict(draft.references), "platforms": [entry]}
    if draft.networks:
        doc["networks"] = draft.networks
    head = [f"# Platform read by `perfmodel probe` {draft.origin}."]
    if draft.missing:
        head += ["# NOT YET VALID -- fill these fields (or rerun with the options named):"]
        head += _comment([f"{k}: {v}" for k, v in draft.missing.items()])
    head += ["# Found:", *_comment(draft.inventory or ["no drives or NICs listed"])]
    head += ["# Not read, or left blank:", *_comment(list(dict.fromkeys(draft.unread)))]
    head += ["# Use it: perfmodel predict WORKLOAD.yaml --platform THIS_FILE.yaml", ""]
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)
    return "\n".join(head) + body


def summary_lines(draft: Draft) -> list[str]:
    """What ``perfmodel probe`` prints: the platform in a few lines, then what it could not read."""
    e = draft.entry
    cpu = f"{e.get('sockets', '?')} x {e.get('cores_per_socket', '?')} cores"
    cpu += f" x {e.get('threads_per_core', '?')} threads"
    core = e.get("microarchitecture") or "family default core"
    slots = ", ".join(f"{s['count']} x {s['device']}" for s in e.get("storage", [])) or "?"
    lines = [
        f"platform {e['id']}: {e.get('cpu_model', 'CPU unknown')}",
        f"  arch {e.get('arch', '?')} ({core}); {cpu}; {e.get('numa_nodes', '?')} NUMA node(s)",
        f"  base {e.get('base_ghz', '?')} GHz, turbo {e.get('turbo_ghz', '-')} GHz; "
        f"L3 {e.get('l3_mib', '-')} MiB; RAM {e.get('ram_gib', '?')} GiB",
        f"  network {e.get('network', '?')}; storage {slots}",
        *[f"  {line}" for line in draft.inventory],
        "could not read, or left blank:",
        *[f"  - {line}" for line in dict.fromkeys(draft.unread)],
    ]
    if draft.missing:
        lines += ["to fill before the file loads:", *[f"  - {k}: {v}" for k, v in draft.missing.items()]]
    return lines
