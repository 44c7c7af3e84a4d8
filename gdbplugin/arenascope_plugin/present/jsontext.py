"""The text of every JSON document the plugin writes (snapshots, --json output): indented for a
person when small, compact when large. Python's json module encodes in C only without `indent`,
so an indented 16,384-region snapshot took 1.8 s to encode and a compact one 0.2 s
(tools/bench_plugin.py, "scale"); a large document is read by a program (the viewer, a script)
anyway. Both are the same JSON to a parser."""
import json

INDENT_UP_TO = 2000  # regions in all arenas: an indented document at most this large


def regions_in(doc: dict) -> int:
    """The regions the document's arenas hold (a snapshot's, `arena regions --json`'s)."""
    arenas = doc.get("arenas") if isinstance(doc, dict) else None
    return sum(len(a.get("regions") or ()) for a in arenas if isinstance(a, dict)) if isinstance(arenas, list) else 0


def dumps(doc: dict) -> str:
    """`doc` as JSON text: indent 1 up to INDENT_UP_TO regions, else compact (no spaces)."""
    if regions_in(doc) <= INDENT_UP_TO:
        return json.dumps(doc, indent=1)
    return json.dumps(doc, separators=(",", ":"))
