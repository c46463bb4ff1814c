"""deploy/Dockerfile and .dockerignore, checked statically: Docker cannot run on the dev machines or in CI.

The structure the issue asks for (multi-stage, slim final stage, non-root USER, no build tools in the
final stage, ENTRYPOINT triagebot), that it agrees with the manifests (uid, state dir, ports), that the
build context holds what the wheel is built from, and that the wheel will carry what the code needs at
run time: its data files (package-data) and every third-party module it imports (dependencies). And that the
build is reproducible (issue 28, point 3): the base image pinned by digest with its tag beside it, every Python
package installed from a hash-pinned lock with --require-hashes --no-deps, and the locks agreeing with
pyproject.toml.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deploy.support import BASE, COMPONENTS, DEPLOY, REPO, load_yaml

DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
PACKAGES = ("bot", "collectors", "playbooks", "drills")
BUILD_TOOLS = re.compile(r"\b(apt-get|apt|apk|yum|dnf|microdnf|gcc|g\+\+|cc|clang|make|build-essential|"
                         r"python3?-dev|libpq-dev|rustc|cargo|pip3?\s+install|pip\s+wheel)\b")


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [arg for kw, arg in self.instructions if kw == keyword]


def _instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction, with continuations joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, args = line.partition(" ")
        out.append((keyword.upper(), args.strip()))
    return out


def _stages() -> tuple[dict[str, str], list[Stage]]:
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for keyword, rest in _instructions(DOCKERFILE.read_text(encoding="utf-8")):
        if keyword == "FROM":
            words = rest.split()
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m.group(1) or m.group(2)], words[0])
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(image, name))
        elif not stages and keyword == "ARG":
            key, _, default = rest.partition("=")
            args[key] = default
        elif stages:
            stages[-1].instructions.append((keyword, rest))
    return args, stages


def _final() -> Stage:
    return _stages()[1][-1]


def _build() -> Stage:
    builds = [s for s in _stages()[1] if s.name == "build"]
    assert len(builds) == 1, "one builder stage named `build`"
    return builds[0]


def test_multi_stage_with_a_slim_python_final_stage() -> None:
    _, stages = _stages()
    assert len(stages) >= 2, "a builder stage and a final stage"
    final = stages[-1]
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-[a-z]+)?(@sha256:[0-9a-f]{64})?", final.image), final.image
    # The venv copied from the builder points at the builder's interpreter: same base image.
    assert _build().image == final.image
    assert final.name != "build"


def test_final_stage_runs_as_a_non_root_user() -> None:
    users = _final().all("USER")
    assert users, "the final stage sets USER"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0, f"numeric non-root uid (runAsNonRoot checks it): {users[-1]}"
    assert not gid or (gid.isdigit() and int(gid) != 0)
    # The manifests run the bot as the image's user.
    deployment = load_yaml(BASE / "deployment.yaml")
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(uid)
    # Nothing after the last USER switches back.
    keywords = [kw for kw, _ in _final().instructions]
    assert keywords.index("USER") == len(keywords) - 1 - keywords[::-1].index("USER")
    assert not [arg for kw, arg in _final().instructions[keywords.index("USER"):] if kw == "RUN"]


def test_no_build_tools_in_the_final_stage() -> None:
    for argument in _final().all("RUN"):
        assert not BUILD_TOOLS.search(argument), f"build tooling in the final stage: {argument}"
    assert not _final().all("ADD")
    copies = _final().all("COPY")
    assert copies == ["--from=build /opt/triagebot /opt/triagebot"], "only the built venv enters the image"


def test_no_remote_add_anywhere() -> None:
    for stage in _stages()[1]:
        for argument in stage.all("ADD"):
            assert not re.search(r"https?://|git@", argument), argument


def test_entrypoint_cmd_and_environment() -> None:
    final = _final()
    assert final.all("ENTRYPOINT") == ['["triagebot"]']
    assert final.all("CMD") == ['["serve"]']
    env = " ".join(final.all("ENV"))
    assert "TRIAGEBOT_STATE_DIR=/var/lib/triagebot" in env
    assert re.search(r"PATH=/opt/triagebot/bin:", env)
    assert "PYTHONDONTWRITEBYTECODE=1" in env, "a read-only root filesystem cannot take .pyc files"
    # The state dir exists and belongs to the runtime user even without a volume.
    assert any("/var/lib/triagebot" in run and "10001" in run for run in final.all("RUN"))
    deployment_env = {e["name"]: e.get("value") for e in
                      load_yaml(BASE / "deployment.yaml")["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert deployment_env["TRIAGEBOT_STATE_DIR"] == "/var/lib/triagebot"


def test_exposed_ports_match_the_manifests() -> None:
    exposed = {int(p) for arg in _final().all("EXPOSE") for p in arg.split()}
    bot = load_yaml(BASE / "deployment.yaml")["spec"]["template"]["spec"]["containers"][0]
    agent = load_yaml(COMPONENTS / "node-agent" / "daemonset.yaml")["spec"]["template"]["spec"]["containers"][0]
    assert exposed == {bot["ports"][0]["containerPort"], agent["ports"][0]["containerPort"]} == {8080, 9105}


def test_builder_builds_a_wheel_into_a_venv() -> None:
    runs = " ".join(_build().all("RUN"))
    assert "pip wheel" in runs and "python -m venv /opt/triagebot" in runs
    assert re.search(r"set -- /wheels/triagebot-\*\.whl\s+&&\s+/opt/triagebot/bin/pip install --no-deps "
                     r'"\$1\[\$\{TRIAGEBOT_EXTRAS\}\]"', runs), "the wheel is installed, its dependencies from the lock"
    assert "triagebot --help" in runs, "the build proves the entry point imports"


def _image_extras() -> set[str]:
    """The extras the image installs unless the build arg says otherwise."""
    default = [arg.partition("=")[2] for arg in _build().all("ARG") if arg.startswith("TRIAGEBOT_EXTRAS=")]
    assert len(default) == 1, "ARG TRIAGEBOT_EXTRAS=<default extras> in the builder stage"
    return {e.strip() for e in default[0].split(",") if e.strip()}


def test_image_installs_the_remote_llm_providers_by_default() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert _image_extras() == {"openai", "ollama"}
    # The opt-in ones named in the file's usage line exist, and none of them is a test tool.
    assert {"openai", "ollama", "llamacpp", "semantic"} <= set(extras)
    assert "dev" not in _image_extras()
    usage = DOCKERFILE.read_text(encoding="utf-8")
    assert "--build-arg TRIAGEBOT_EXTRAS=openai,ollama,llamacpp,semantic" in usage


def test_llama_cpp_builds_need_nothing_at_run_time() -> None:
    """llamacpp compiles in the builder: portable (no -march=native) and without OpenMP, whose libgomp the slim
    final stage does not have; the compiler is installed only when that extra is asked for."""
    env = " ".join(_build().all("ENV"))
    cmake_args = re.search(r'CMAKE_ARGS="([^"]*)"', env)
    assert cmake_args, "CMAKE_ARGS for llama-cpp-python in the builder"
    flags = set(cmake_args.group(1).split())
    assert {"-DGGML_NATIVE=OFF", "-DGGML_OPENMP=OFF", "-DLLAVA_BUILD=OFF"} <= flags
    compiler = [run for run in _build().all("RUN") if "g++" in run]
    assert compiler and all("*,llamacpp,*)" in run for run in compiler), "g++ only for the llamacpp extra"


def test_docs_are_in_the_image_where_the_bot_looks_for_them() -> None:
    """/ask searches docs/: copied next to the venv, and TRIAGEBOT_DOCS_DIR points there (the default, beside the
    installed package, would be site-packages/docs)."""
    from bot.config import Settings

    assert "docs_dir" in Settings.model_fields
    env = " ".join(_final().all("ENV"))
    found = re.search(r"\bTRIAGEBOT_DOCS_DIR=(\S+)", env)
    assert found, "the final stage sets TRIAGEBOT_DOCS_DIR"
    docs_dir = found.group(1)
    assert docs_dir.startswith("/opt/triagebot/"), "inside the venv directory, the only thing the final stage copies"
    assert "COPY docs/ docs/" in [f"COPY {arg}" for arg in _build().all("COPY")]
    runs = " ".join(_build().all("RUN"))
    assert f"cp -r docs {docs_dir}" in runs
    assert (REPO / "docs" / "install.md").is_file()


# --- the build context -------------------------------------------------------------------------------

def _ignore_patterns() -> list[tuple[bool, re.Pattern[str]]]:
    patterns = []
    for raw in DOCKERIGNORE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        body = line[1:] if negated else line
        body = body.strip("/")
        regex = ""
        i = 0
        while i < len(body):
            if body.startswith("**", i):
                regex += ".*"
                i += 2
                if body.startswith("/", i):
                    regex = regex[:-2] + "(?:.*/)?"
                    i += 1
            elif body[i] == "*":
                regex += "[^/]*"
                i += 1
            elif body[i] == "?":
                regex += "[^/]"
                i += 1
            elif body[i] == "[":
                end = body.index("]", i)
                regex += body[i:end + 1]
                i = end + 1
            else:
                regex += re.escape(body[i])
                i += 1
        patterns.append((negated, re.compile(regex)))
    return patterns


def _excluded(path: str) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent directories decides."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    result = False
    for negated, pattern in _ignore_patterns():
        if any(pattern.fullmatch(p) for p in prefixes):
            result = not negated
    return result


def test_dockerignore_keeps_the_context_to_what_the_wheel_needs() -> None:
    for keep in ("pyproject.toml", "README.md", "bot/cli/main.py", "collectors/catalogs/alerts.yaml",
                 "playbooks/oom-killed.yaml", "drills/__init__.py", "bot/templates/slack", "docs/install.md"):
        assert not _excluded(keep), f"{keep} must be in the build context"
    for drop in (".venv/bin/python", ".git/HEAD", "tests/unit/x.py", "benchmarks/x.py", "deploy/Dockerfile",
                 ".ci/run", "bot/__pycache__/cli.cpython-311.pyc", "state/triagebot.sqlite",
                 "triagebot.egg-info/PKG-INFO", "scripts/test.sh"):
        assert _excluded(drop), f"{drop} must stay out of the build context"


def test_every_copied_source_exists_and_is_in_the_context() -> None:
    for argument in _build().all("COPY"):
        sources = [w for w in argument.split() if not w.startswith("--")][:-1]
        for source in sources:
            path = REPO / source
            assert path.exists(), f"COPY {source}: no such file in the repo"
            assert not _excluded(source.rstrip("/")), f"COPY {source}: excluded by .dockerignore"


def test_the_image_copies_every_package_the_wheel_is_built_from() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    top = {pattern.rstrip("*") for pattern in include}
    copied = {w.rstrip("/") for arg in _build().all("COPY") for w in arg.split()[:-1] if not w.startswith("--")}
    assert top <= copied, f"packages not copied into the build: {top - copied}"
    assert pyproject["project"]["readme"] in copied and "pyproject.toml" in copied


# --- what the wheel (and so the image) carries -----------------------------------------------------------

def test_package_data_covers_every_data_file() -> None:
    """A data file outside package-data is missing from the wheel, and from the image."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    package_data: dict[str, list[str]] = pyproject["tool"]["setuptools"]["package-data"]
    uncovered = []
    for package in PACKAGES:
        root = REPO / package
        covered = {p for pattern in package_data.get(package, []) for p in root.glob(pattern) if p.is_file()}
        for path in root.rglob("*"):
            if (path.is_file() and path.suffix not in (".py", ".pyc", ".pyi") and "__pycache__" not in path.parts
                    and path not in covered):
                uncovered.append(str(path.relative_to(REPO)))
    assert not uncovered, f"data files the wheel would miss: {uncovered[:10]}"


@dataclass(frozen=True)
class ImportSite:
    importer: str  # dotted module name, e.g. bot.assist.llm
    module: str  # what it imports, in full, e.g. langchain_core.messages
    lazy: bool  # inside a function body: only imported when that code runs


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_sites(package: str) -> list[ImportSite]:
    """Every import in a package, except under `if TYPE_CHECKING:`."""
    sites: list[ImportSite] = []
    for path in (REPO / package).rglob("*.py"):
        if "incidents" in path.parts:
            continue
        _collect(ast.parse(path.read_text(encoding="utf-8")), _module_name(path), False, sites)
    return sites


def _collect(node: ast.AST, importer: str, lazy: bool, sites: list[ImportSite]) -> None:
    """The imports under `node`, each node visited once (walking every function body again for each enclosing
    one made this the slowest test of the folder). `lazy`: inside a function body."""
    if isinstance(node, ast.Import):
        sites += [ImportSite(importer, alias.name, lazy) for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        sites.append(ImportSite(importer, node.module, lazy))
    if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
        children = [node.test, *node.orelse]  # its body is skipped
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        for child in node.body:
            _collect(child, importer, True, sites)
        children = [*node.decorator_list, node.args, *([node.returns] if node.returns else [])]
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        _collect(child, importer, lazy, sites)


def _imports(package: str) -> set[str]:
    """Top-level modules imported by a package, except under `if TYPE_CHECKING:`."""
    return {site.module.split(".")[0] for site in _import_sites(package)}


def _closure(requirements: list[str]) -> set[str]:
    """Canonical names of the distributions the requirements pull in, transitively, as installed here."""
    seen: set[tuple[str, frozenset[str]]] = set()
    names: set[str] = set()
    todo = [(Requirement(r), "") for r in requirements]  # (requirement, the parent's extra it came through)
    while todo:
        req, via = todo.pop()
        if req.marker and not req.marker.evaluate({"extra": via}):
            continue
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        names.add(key[0])
        try:
            children = requires(req.name) or []
        except PackageNotFoundError:
            continue
        todo += [(Requirement(child), extra) for child in children for extra in ("", *req.extras)]
    return names


def _provided(module: str, available: set[str], dists: dict[str, list[str]]) -> bool:
    if module not in dists:  # not installed here (an opt-in extra on a dev machine): go by the name
        return any(name.startswith(canonicalize_name(module)) for name in available)
    return bool({canonicalize_name(d) for d in dists[module]} & available)


def test_image_dependencies_cover_every_import() -> None:
    """The image installs [project].dependencies and its default extras: every module the code imports must come
    with them, except modules of the opt-in extras (llamacpp, semantic), which only code that runs when the
    feature is configured may import."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extras: dict[str, list[str]] = pyproject["project"]["optional-dependencies"]
    image = _image_extras()
    available = _closure([*pyproject["project"]["dependencies"], *(r for e in image for r in extras[e])])
    opt_in = _closure([r for name, reqs in extras.items() if name not in image | {"dev"} for r in reqs]) - available
    dists = packages_distributions()
    sites = [site for package in PACKAGES for site in _import_sites(package)]
    missing: dict[str, list[str]] = {}
    eager: list[str] = []
    for site in sites:
        module = site.module.split(".")[0]
        if module in sys.stdlib_module_names or module in PACKAGES or module == "__future__":
            continue
        if _provided(module, available, dists):
            continue
        if not _provided(module, opt_in, dists):
            missing.setdefault(module, []).append(site.importer)
            continue
        # An opt-in module: imported inside a function, or by a module that is itself only imported that way.
        importers = [s for s in sites if s.module == site.importer or s.module.startswith(site.importer + ".")]
        if not site.lazy and (not importers or not all(s.lazy for s in importers)):
            eager.append(f"{site.importer} imports {site.module} when it is imported")
    assert not missing, ("imported but not installed by [project].dependencies or the image's extras (the image "
                         f"would fail to import them): {missing}")
    assert not eager, f"opt-in extras imported where the default image would load them: {eager}"


# --- reproducible builds: the pinned base image and the hash-pinned locks ------------------------------------

LOCKS = {"openai,ollama": DEPLOY / "requirements.lock",
         "openai,ollama,llamacpp,semantic": DEPLOY / "requirements-all-extras.lock"}
BUILD_LOCK = DEPLOY / "build-requirements.lock"


def test_base_image_is_pinned_by_digest_with_its_tag_beside_it() -> None:
    _, stages = _stages()
    for stage in stages:
        # A patch-level tag for readers, the digest for Docker (which ignores the tag when both are given).
        assert re.fullmatch(r"python:3\.11\.\d+-slim@sha256:[0-9a-f]{64}", stage.image), stage.image
    assert len({s.image for s in stages}) == 1
    install = (REPO / "docs" / "install.md").read_text(encoding="utf-8")
    assert stages[0].image in install, "docs/install.md names the pinned image and how its digest was obtained"


@dataclass
class Locked:
    name: str
    version: str
    hashes: list[str] = field(default_factory=list)
    via: list[str] = field(default_factory=list)


def _lock(path: Path) -> dict[str, Locked]:
    """name -> entry of a uv/pip-tools style lock: `name==version \\` lines, `--hash=` lines, `# via` comments."""
    entries: dict[str, Locked] = {}
    current: Locked | None = None
    in_via = False
    for line in path.read_text(encoding="utf-8").splitlines():
        pin = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)\s*\\?$", line)
        digest = re.match(r"^\s+--hash=sha256:([0-9a-f]{64})", line)
        via = re.match(r"^\s+# via(?: (.+))?$", line)
        more = re.match(r"^\s+#\s{3}(.+)$", line)
        if pin:
            current = entries.setdefault(canonicalize_name(pin.group(1)),
                                         Locked(canonicalize_name(pin.group(1)), pin.group(2)))
            in_via = False
        elif digest and current is not None:
            current.hashes.append(digest.group(1))
        elif via and current is not None:
            in_via = via.group(1) is None  # a bare "# via" is followed by one requirer per line
            current.via += [via.group(1).strip()] if via.group(1) else []
        elif more and in_via and current is not None:
            current.via.append(more.group(1).strip())
        else:
            assert not line.strip() or line.startswith("#"), f"{path.name}: unexpected line {line!r}"
    return entries


def _requirements(extras: set[str]) -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    optional: dict[str, list[str]] = project["optional-dependencies"]
    return [Requirement(r) for r in [*project["dependencies"], *(r for e in sorted(extras) for r in optional[e])]]


def test_the_dockerfile_installs_only_from_the_locks_with_hashes() -> None:
    runs = " ".join(_build().all("RUN"))
    assert "pip install --require-hashes --no-deps -r deploy/build-requirements.lock" in runs
    assert "pip wheel --no-deps --no-build-isolation" in runs, "the wheel's build backend comes from the lock"
    assert '/opt/triagebot/bin/pip install --require-hashes --no-deps -r "$lock"' in runs
    assert "/opt/triagebot/bin/pip check" in runs
    for extras, path in LOCKS.items():
        assert f",{extras},) lock=deploy/{path.name}" in runs, f"TRIAGEBOT_EXTRAS={extras} installs {path.name}"
    assert "exit 2" in runs, "any other TRIAGEBOT_EXTRAS fails the build with a reason"
    # Every pip install in the builder either checks hashes or adds only the wheel built here, without deps.
    for command in re.findall(r"pip install [^&]*", runs):
        assert "--require-hashes" in command or ("--no-deps" in command and "/wheels/" in runs), command
    copied = " ".join(_build().all("COPY"))
    for path in (*LOCKS.values(), BUILD_LOCK):
        assert f"deploy/{path.name}" in copied and not _excluded(f"deploy/{path.name}")


@pytest.mark.parametrize("extras", sorted(LOCKS))
def test_every_locked_package_is_hash_pinned_and_required_by_pyproject(extras: str) -> None:
    """The lock is the closure of pyproject's runtime dependencies (+ those extras): each direct requirement is
    pinned to a version it allows, every entry is reached from them (the lock's `# via` graph), and each has hashes."""
    lock = _lock(LOCKS[extras])
    assert lock, f"{LOCKS[extras].name} is empty"
    for entry in lock.values():
        assert entry.hashes, f"{entry.name} has no --hash"
        assert entry.via, f"{entry.name} says nothing of what requires it"
    wanted = _requirements(set(extras.split(",")))
    for req in wanted:
        name = canonicalize_name(req.name)
        assert name in lock, f"{LOCKS[extras].name} lacks {req}"
        assert req.specifier.contains(lock[name].version, prereleases=True), f"{name}=={lock[name].version} vs {req}"
        for extra in req.extras:  # psycopg[binary] -> psycopg-binary
            assert canonicalize_name(f"{req.name}-{extra}") in lock, f"{req}: its extra is not locked"
    direct = {e.name for e in lock.values() if any(v.startswith("triagebot") for v in e.via)}
    assert direct == {canonicalize_name(r.name) for r in wanted}, "direct pins differ from pyproject's requirements"
    # Reachability: walk the `via` edges backwards from the direct requirements.
    reached, todo = set(direct), list(direct)
    while todo:
        parent = todo.pop()
        for entry in lock.values():
            if entry.name not in reached and parent in {canonicalize_name(v.split()[0]) for v in entry.via}:
                reached.add(entry.name)
                todo.append(entry.name)
    assert set(lock) == reached, f"locked but required by nothing in pyproject.toml: {sorted(set(lock) - reached)}"


def test_the_default_lock_is_what_the_image_installs_by_default() -> None:
    assert _image_extras() == {"openai", "ollama"}
    assert LOCKS["openai,ollama"].name == "requirements.lock"


def test_the_build_backend_lock_matches_build_system_requires() -> None:
    requires = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    lock = _lock(BUILD_LOCK)
    for raw in requires:
        req = Requirement(raw)
        entry = lock[canonicalize_name(req.name)]
        assert entry.hashes and req.specifier.contains(entry.version)
    assert set(lock) == {canonicalize_name(Requirement(r).name) for r in requires}


def test_the_locks_come_from_the_lock_script() -> None:
    script = (REPO / "scripts" / "lock.sh").read_text(encoding="utf-8")
    assert "--generate-hashes" in script
    for path in (*LOCKS.values(), BUILD_LOCK):
        assert f"deploy/{path.name}" in script
        assert path.read_text(encoding="utf-8").startswith("# This file was autogenerated by uv"), path.name
