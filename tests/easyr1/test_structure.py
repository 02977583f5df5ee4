"""The package's shape, read from its source with ast: imports run one way (shared core at the bottom, the two
methods as siblings over it, the engine that drives vLLM beside them, tools over both, the EasyR1 host on top of the
methods and the engine, zoomzero's plugin a wing of it, the commands at the very top), every subpackage has a face and
a map naming all its modules, no module is over 500 lines and no function over 80, and host lookups have no effects.

Function-level imports count as edges too: hidden imports are how an 8-file import circle once went unseen.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import zoomzero_plugin

ROOT = "zoomzero_plugin"
ROOT_DIR = Path(zoomzero_plugin.__file__).parent
PACKAGE = f"{ROOT}.hosts.easyr1"
WING = f"{PACKAGE}.zoomzero"
SHIPPED_DATA = (f"{ROOT}/yamls", f"{ROOT}/examples")  # recipes and scripts mapped into the wheel, no modules


def module_name(path: Path) -> str:
    parts = [ROOT, *path.relative_to(ROOT_DIR).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(ROOT_DIR.rglob("*.py"))}
HOST = {m for m in MODULES if m == PACKAGE or m.startswith(PACKAGE + ".")}
HOSTS = f"{ROOT}.hosts"  # every host, and the seam machinery they share
VERL = f"{HOSTS}.verl"
ALL_HOSTS = {m for m in MODULES if m == HOSTS or m.startswith(HOSTS + ".")}

# The shared core: the package's top-level modules, but for its face (__init__).
CORE = {m for m in MODULES if m.count(".") == 1 and MODULES[m].name != "__init__.py"}
COMMANDS = f"{ROOT}.commands"
ENGINE = f"{ROOT}.engine"
TOOLS = tuple(f"{ROOT}.{t}" for t in ("inference", "eval", "data", "synthetic", "integrations"))
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 500, 80


def resolve(importer: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The package's modules an import statement in ``importer`` loads (a package ``__init__`` counts as its own
    name; ``from pkg import name`` loads ``pkg.name`` when it is a module, else ``pkg``)."""
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
        targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in node.names]
    return sorted({t for t in targets if t in MODULES})


def imports(name: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module top) for every import statement anywhere in module ``name``."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [(t, node.lineno, id(node) in top) for (t,) in zip(resolve(name, node))]
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
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in graph:
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def arrows(source, allowed) -> list[str]:
    """``importer -> imported`` for every edge out of the modules ``source`` selects into modules ``allowed``
    rejects."""
    return [f"{a} -> {b}" for a, targets in GRAPH.items() if source(a) for b in targets if not allowed(b)]


def test_the_graph_reader_sees_a_circle_when_there_is_one():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b", "c"], "b": ["c"], "c": []}) is None
    assert f"{PACKAGE}.state" in GRAPH[f"{PACKAGE}.advantage"]  # relative imports resolve
    assert f"{PACKAGE}.hookspecs" in GRAPH[f"{WING}.plugin"]  # `from ..hookspecs import` resolves
    assert f"{ROOT}.gvqa.gvqa_reward" in GRAPH[f"{WING}.options"]  # `from zoomzero_plugin.gvqa import gvqa_reward`
    assert f"{ROOT}.agent.protocol" in GRAPH[f"{ROOT}.agent"]  # a package's own relative imports
    assert f"{WING}.plugin" in MODULES and f"{PACKAGE}.activation" in MODULES
    assert {f"{ROOT}.spans", f"{ROOT}.answers", f"{ROOT}.journal"} <= CORE and f"{ROOT}.gvqa.zoom" not in CORE


def test_the_package_import_graph_has_no_cycle():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import circle: " + " -> ".join(c.removeprefix(ROOT + ".") for c in cycle)


def test_nothing_outside_hosts_imports_hosts():
    assert arrows(lambda a: a not in ALL_HOSTS, lambda b: b not in ALL_HOSTS) == []


def test_hosts_do_not_import_each_other_only_what_they_share():
    """What both hosts need lives below them (the core, the methods, hosts' own shared modules), never in one host."""
    assert arrows(lambda a: inside(a, VERL), lambda b: not inside(b, PACKAGE)) == []
    assert arrows(lambda a: inside(a, PACKAGE), lambda b: not inside(b, VERL)) == []


def test_the_shared_core_imports_only_the_core():
    assert arrows(lambda a: a in CORE, lambda b: b in CORE) == []


def test_the_flat_top_level_holds_only_the_core():
    """Every top-level module is core: it imports only the core (above), and none is a command (a module with
    ``add_arguments`` and ``run``) or the target of an entry point: those live in their layers' packages."""
    import tomllib

    project = tomllib.loads((ROOT_DIR.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    targets = [v.split(":")[0] for v in project["scripts"].values()]
    targets += [v.split(":")[0] for group in project["entry-points"].values() for v in group.values()]
    assert not [t for t in targets if t in CORE], "an entry point's module in the flat top level"
    commands = []
    for name in CORE:
        defined = {n.name for n in ast.parse(MODULES[name].read_text(encoding="utf-8")).body if hasattr(n, "name")}
        if {"add_arguments", "run"} <= defined:
            commands.append(name)
    assert commands == []
    assert f"{COMMANDS}.cli" in MODULES and f"{ENGINE}.stream" in MODULES  # the homes the flat level's others moved to


def test_hosts_import_no_tool_layer_and_the_engine_only_the_core():
    """hosts/ stands on the core, the two methods and the engine (what drives vLLM), never on a tool; the engine
    serves both methods and both hosts and stands on the core alone."""
    assert arrows(lambda a: a in HOST, lambda b: not any(inside(b, t) for t in (*TOOLS, COMMANDS))) == []
    assert arrows(lambda a: inside(a, ENGINE), lambda b: b in CORE or inside(b, ENGINE)) == []


def test_nothing_but_the_commands_imports_the_commands():
    assert arrows(lambda a: not inside(a, COMMANDS), lambda b: not inside(b, COMMANDS)) == []


def test_no_module_is_over_500_lines_and_no_function_over_80():
    long_modules, long_functions = [], []
    for name, path in MODULES.items():
        source = path.read_text(encoding="utf-8")
        if len(source.splitlines()) > MAX_MODULE_LINES:
            long_modules.append(name)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                    long_functions.append(f"{name}.{node.name}")
    assert long_modules == [] and long_functions == []


def map_misses(package: str) -> list[str]:
    """The modules and subpackages of ``package`` its ``__init__`` docstring does not name (as a word)."""
    folder = MODULES[package].parent
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text(encoding="utf-8"))) or ""
    children = [p.stem for p in folder.glob("*.py") if p.name != "__init__.py"]
    children += [d.name for d in folder.iterdir() if (d / "__init__.py").is_file()]
    return sorted(c for c in children if not re.search(rf"(?<!\w){re.escape(c)}(?!\w)", doc))


def test_every_package_map_names_all_its_modules():
    packages = [m for m, p in MODULES.items() if p.name == "__init__.py" and not str(p.parent).endswith(SHIPPED_DATA)]
    assert {name: map_misses(name) for name in packages if map_misses(name)} == {}


def test_the_map_check_sees_a_module_its_map_does_not_name(tmp_path, monkeypatch):
    (tmp_path / "__init__.py").write_text('"""The faces: :mod:`.shown`, and ``also``."""\n')
    for name in ("shown", "also", "hidden"):
        (tmp_path / f"{name}.py").write_text("")
    monkeypatch.setitem(MODULES, "fake", tmp_path / "__init__.py")
    assert map_misses("fake") == ["hidden"]


def test_each_method_imports_only_itself_and_the_shared_core():
    for method in (f"{ROOT}.agent", f"{ROOT}.gvqa"):
        assert arrows(lambda a: inside(a, method), lambda b: b in CORE or inside(b, method)) == [], method


def test_the_generic_host_imports_no_feature_code_and_never_the_wing():
    generic = HOST - {m for m in HOST if inside(m, WING)}
    features = (f"{ROOT}.agent", f"{ROOT}.gvqa", WING)
    assert arrows(lambda a: a in generic, lambda b: not any(inside(b, f) for f in features)) == []


def test_host_modules_import_each_other_only_at_the_top():
    hidden = [
        (name, target, line)
        for name in ALL_HOSTS
        for target, line, at_top in imports(name)
        if not at_top and target in ALL_HOSTS and (name, target) not in DEFERRED
    ]
    assert hidden == [], "imports of host modules inside functions hide the graph"


# Imports of the package's own modules inside functions, each with its reason: only modules that import torch (the
# commands stay quick to start, `zoomzero --help` included). Every other module imports its own modules at the top.
_REGISTERED = (
    "registered when verl imports its registry: importing verl's loop machinery in every process costs seconds"
)
DEFERRED = {
    (f"{VERL}.plugin", f"{VERL}.zoom_loop"): _REGISTERED,
    (f"{VERL}.plugin", f"{VERL}.videozoomer_loop"): _REGISTERED,
    (f"{VERL}.plugin", f"{VERL}.reward"): _REGISTERED,
    (f"{VERL}.plugin", f"{VERL}.tokenadv"): _REGISTERED,
    (f"{VERL}.cli", f"{VERL}.recipe"): "the recipe check imports torch",
    (f"{VERL}.doctor", f"{VERL}.seams"): "the seam table imports torch",
    (f"{COMMANDS}.demo", ROOT): "the face's TokenAdv, reward and masker names load torch",
    (f"{COMMANDS}.demo", f"{COMMANDS}.agent_demo"): "imports torch",
    (f"{COMMANDS}.demo", f"{ROOT}.synthetic.template_sampler"): "imports torch",
}


def test_modules_import_their_own_modules_at_the_top():
    hidden = {(name, target) for name in MODULES for target, _, at_top in imports(name) if not at_top}
    assert hidden == set(DEFERRED)


def test_the_state_module_is_the_bottom():
    """Modules that seams wrap look the host up in `state`, which imports nothing that installs seams."""
    below_state = set()
    todo = [f"{PACKAGE}.state"]
    while todo:
        for target in GRAPH[todo.pop()]:
            if target not in below_state:
                below_state.add(target)
                todo.append(target)
    generic = {f"{ROOT}.hosts.seams", f"{ROOT}.hosts.post_import"}  # the seam machinery every host shares
    own = {f"{PACKAGE}.registry", f"{PACKAGE}.errors", f"{PACKAGE}.hookspecs", f"{ROOT}.errors"}
    assert below_state <= own | generic


def test_every_package_has_a_face_whose_names_resolve_and_shadow_no_submodule():
    packages = [m for m, p in MODULES.items() if p.name == "__init__.py" and not str(p.parent).endswith(SHIPPED_DATA)]
    faceless = []
    for name in packages:
        package = importlib.import_module(name)
        public = getattr(package, "__all__", None)
        if public is None:
            faceless.append(name)
            continue
        assert all(getattr(package, n) is not None for n in public), name
        # a face name equal to a submodule's is replaced by the submodule once that is imported
        assert not [n for n in public if f"{name}.{n}" in MODULES], name
    # namespaces for hosts and for integrations; a plugin, loaded through its entry point
    assert faceless == [f"{ROOT}.hosts", WING, f"{ROOT}.integrations"]


LOOKUP_HAS_NO_EFFECTS = """
import sys
from zoomzero_plugin.hosts.easyr1 import PluginError, activate, current_host
from zoomzero_plugin.hosts.post_import import _FINDER
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
