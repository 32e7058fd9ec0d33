"""The type stubs (.pyi) and docstrings cover every public call: an editor completes each with its
parameters and shows its documentation. Checked against the package as it runs, so a call added without
its stub, or a parameter renamed in one place only, fails here."""

import ast
import inspect
import os

import tcplab
import tcplab.ray

PACKAGE = os.path.dirname(tcplab.__file__)


def _stub(name):
    with open(os.path.join(PACKAGE, name), encoding="utf-8") as f:
        return ast.parse(f.read())


def _defs(body):
    """{name: node} of the functions and classes defined at one level of a stub."""
    return {n.name: n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def _params(fn):
    a = fn.args
    return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg != "self"]


def _public(cls):
    return {
        n for n, v in vars(cls).items() if not n.startswith("_") and (callable(v) or isinstance(v, property))
    } | ({"__len__"} & set(vars(cls)))


def _check_function(stub, runtime, where):
    assert ast.get_docstring(stub), f"{where}: no docstring in the stub"
    assert inspect.getdoc(runtime), f"{where}: no docstring at run time"
    if isinstance(runtime, property):
        return
    params = [p for p in inspect.signature(runtime).parameters if p != "self"]
    assert _params(stub) == params, f"{where}: the stub's parameters {_params(stub)} are not {params}"


def test_every_public_name_has_a_stub_with_docstrings_and_the_same_parameters():
    stub = _defs(_stub("__init__.pyi").body)
    names = [n for n in tcplab.__all__ if n != "__version__"]
    assert set(names) <= set(stub), set(names) - set(stub)
    for name in names:
        runtime = getattr(tcplab, name)
        node = stub[name]
        if isinstance(node, ast.FunctionDef):
            _check_function(node, runtime, f"tcplab.{name}")
            continue
        assert ast.get_docstring(node), f"tcplab.{name}: no class docstring in the stub"
        assert inspect.getdoc(runtime), f"tcplab.{name}: no class docstring at run time"
        members = _defs(node.body)
        for m in _public(runtime):
            assert m in members, f"tcplab.{name}.{m}: in the package, not in the stub"
            _check_function(members[m], vars(runtime)[m], f"tcplab.{name}.{m}")
        # Attributes (annotated in the stub) exist at run time, each documented in the stub.
        body = node.body
        for i, n in enumerate(body):
            if isinstance(n, ast.AnnAssign):
                attr = n.target.id
                assert attr in getattr(runtime, "__slots__", ()) or hasattr(runtime, attr) or name.endswith(
                    "Error"
                ), f"tcplab.{name}.{attr}: in the stub, not in the package"
                doc = body[i + 1] if i + 1 < len(body) else None
                assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant), f"tcplab.{name}.{attr}"


def test_the_ray_module_is_stubbed():
    stub = _defs(_stub("ray.pyi").body)
    _check_function(stub["run_plan"], tcplab.ray.run_plan, "tcplab.ray.run_plan")


def test_errors_carry_the_attributes_the_stub_declares():
    with_attrs = _defs(_stub("__init__.pyi").body)["ScenarioError"]
    declared = [n.target.id for n in with_attrs.body if isinstance(n, ast.AnnAssign)]
    try:
        tcplab.run("bulk-10m", set={"test.duraton": "1s"})
    except tcplab.ScenarioError as e:
        for a in declared:
            assert hasattr(e, a), a
    else:
        raise AssertionError("no ScenarioError")
