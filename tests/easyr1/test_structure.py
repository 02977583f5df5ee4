"""The host's shape, read from its source with ast: imports run one way, zoomzero is a wing, lookups have no effects.

Function-level imports count as edges too: hidden imports are how an 8-file import circle once went unseen.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import zoomzero_plugin.hosts.easyr1 as host_package

HOST_DIR = Path(host_package.__file__).parent
PACKAGE = "zoomzero_plugin.hosts.easyr1"
WING = f"{PACKAGE}.zoomzero"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(HOST_DIR).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


MODULES = {module_name(p): p for p in sorted(HOST_DIR.rglob("*.py"))}


def resolve(importer: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The host modules an import statement in ``importer`` loads (a package ``__init__`` counts as its own name)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        is_package = MODULES[importer].name == "__init__.py"
        base = importer.split(".")
        if node.level:
            base = base[: len(base) - node.level + (1 if is_package else 0)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        # `from pkg import name` loads pkg.name when it is a module, else just pkg
        targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in node.names]
    return sorted({t for t in targets if t in MODULES})


def imports(name: str) -> list[tuple[str, int, bool]]:
    """(imported host module, line, at module top) for every import statement anywhere in module ``name``."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [(t, node.lineno, id(node) in top) for t in resolve(name, node)]
    return found


GRAPH = {name: sorted({t for t, _, _ in imports(name)} - {name}) for name in MODULES}


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in graph:
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_graph_reader_sees_a_circle_when_there_is_one():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b", "c"], "b": ["c"], "c": []}) is None
    assert f"{PACKAGE}.state" in GRAPH[f"{PACKAGE}.checks"]  # relative imports resolve
    assert f"{PACKAGE}.hookspecs" in GRAPH[f"{WING}.plugin"]  # `from ..hookspecs import` resolves
    assert f"{WING}.plugin" in MODULES and f"{PACKAGE}.activation" in MODULES


def test_the_host_import_graph_has_no_cycle():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import circle in hosts/easyr1: " + " -> ".join(c.removeprefix(PACKAGE + ".") for c in cycle)


def test_the_generic_host_never_imports_the_zoomzero_wing():
    wrong = [(a, b) for a, targets in GRAPH.items() if not a.startswith(WING) for b in targets if b.startswith(WING)]
    assert wrong == []


def test_host_modules_import_each_other_only_at_the_top():
    hidden = [(name, target, line) for name in MODULES for target, line, at_top in imports(name) if not at_top]
    assert hidden == [], "imports of host modules inside functions hide the graph"


def test_the_state_module_is_the_bottom():
    """Modules that seams wrap look the host up in `state`, which imports nothing that installs seams."""
    below_state = set()
    todo = [f"{PACKAGE}.state"]
    while todo:
        for target in GRAPH[todo.pop()]:
            if target not in below_state:
                below_state.add(target)
                todo.append(target)
    assert below_state <= {f"{PACKAGE}.registry", f"{PACKAGE}.errors", f"{PACKAGE}.hookspecs"}


LOOKUP_HAS_NO_EFFECTS = """
import sys
from zoomzero_plugin.hosts.easyr1 import PluginError, activate, current_host
from zoomzero_plugin.hosts.easyr1.post_import import _FINDER
from zoomzero_plugin.hosts.easyr1.state import activation
try:
    current_host()
except PluginError as e:
    print("refused:", e)
assert activation() is None and _FINDER not in sys.meta_path, "a lookup installed seams"
host = activate("test")
assert current_host() is host and activation().where == "test" and _FINDER in sys.meta_path
print("plugins:", [i.name for i in host.infos])
"""


def test_looking_the_host_up_never_activates_only_activate_does():
    done = subprocess.run([sys.executable, "-c", LOOKUP_HAS_NO_EFFECTS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "refused: the easyr1 plugins are not active in this process" in done.stdout
    assert "plugins: ['zoomzero']" in done.stdout
