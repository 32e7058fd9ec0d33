"""Errors from Python are the CLI's: the same message, word for word, for the same bad input, as a
ScenarioError whose attributes hold the file, line and key; and nothing is left broken after one."""

import subprocess
import os
import sys

import pytest

import tcplab

BAD_KEY = 'name = "x"\n[path.up]\nrate = "10mbit"\ndelay = "20ms"\n[test]\nkind = "tcp_stream"\nduraton = "1s"\n'
BAD_VALUE = 'name = "x"\n[path.up]\nrate = "10mbit"\ndelay = "20ms"\n[test]\nkind = "tcp_strem"\nduration = "1s"\n'

# (what, CLI arguments after `run`, tcplab.run's arguments, attributes the exception must have). FILE is
# the scenario file the case writes.
CASES = [
    ("an unknown key in a file", ["FILE"], dict(), dict(line=7, key="test.duraton")),
    ("a bad value in a file", ["FILE"], dict(), dict(line=6, key="test.kind")),
    (
        "a bad --set value",
        ["bulk-10m", "--set", 'path.up.rate="fast"'],
        dict(scenario="bulk-10m", set={"path.up.rate": "fast"}),
        dict(flag='set path.up.rate="fast"', key="path.up.rate"),
    ),
    (
        "an unknown --set key",
        ["bulk-10m", "--set", 'test.duraton="1s"'],
        dict(scenario="bulk-10m", set=['test.duraton="1s"']),
        dict(key="test.duraton"),
    ),
    (
        "a bad --sweep range",
        ["rr-dsl", "--sweep", "test.burst=3..=x"],
        dict(scenario="rr-dsl", sweep={"test.burst": "3..=x"}),
        dict(),
    ),
    (
        "a sweep of a key that does not exist",
        ["bulk-10m", "--sweep", "path.up.rat=1mbit,2mbit"],
        dict(scenario="bulk-10m", sweep=["path.up.rat=1mbit,2mbit"]),
        dict(),
    ),
    ("--iterations 0", ["bulk-10m", "--iterations", "0"], dict(scenario="bulk-10m", iterations=0), dict()),
    (
        "a confidence level over 100%",
        ["lossy-10m", "--iterations", "3", "--confidence", "150%,5%"],
        dict(scenario="lossy-10m", iterations=3, confidence="150%,5%"),
        dict(),
    ),
]


def _cli_error(exe, args):
    p = subprocess.run([exe, "run", *args, "--quiet"], capture_output=True, text=True)
    assert p.returncode == 2, f"tcplab run {' '.join(args)}: exit {p.returncode} (bad input is 2): {p.stderr}"
    lines = [line for line in p.stderr.splitlines() if line.startswith("tcplab: ")]
    assert lines, p.stderr
    return lines[-1][len("tcplab: ") :]


@pytest.mark.parametrize("what,cli_args,kwargs,attrs", CASES, ids=[c[0] for c in CASES])
def test_the_message_is_the_clis_word_for_word(cli, tmp_path, what, cli_args, kwargs, attrs):
    exe = os.environ["TCPLAB_BIN"]
    if cli_args == ["FILE"]:
        f = tmp_path / "bad.toml"
        f.write_text(BAD_KEY if "key" in what else BAD_VALUE)
        cli_args = [str(f)]
        kwargs = dict(scenario=str(f))
        attrs = dict(attrs, file=str(f))
    expected = _cli_error(exe, cli_args)
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(kwargs.pop("scenario"), **kwargs)
    assert str(e.value) == expected
    assert "accepted" in expected or "expected" in expected or "must" in expected, expected
    for k, v in attrs.items():
        assert getattr(e.value, k) == v, (k, vars(e.value))
    assert e.value.message and e.value.message in expected
    # The interpreter goes on: the next run works.
    assert tcplab.run("bulk-10m", set={"test.duration": "100ms"}).points["throughput_bps"][0] > 0


def test_a_dict_scenario_error_names_the_key_not_a_line_the_caller_never_saw():
    s = {"path": {"up": {"rate": "10mbit", "delay": "20ms"}}, "test": {"kind": "tcp_stream", "duraton": "1s"}}
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(s)
    assert str(e.value).startswith("<dict>: test.duraton: "), str(e.value)
    assert e.value.file == "<dict>" and e.value.line is None and e.value.key == "test.duraton"
    assert "duration" in e.value.message


def test_errors_are_value_and_runtime_errors():
    assert issubclass(tcplab.ScenarioError, ValueError)
    assert issubclass(tcplab.RunError, RuntimeError)


def test_ray_with_the_linux_backend_is_refused_by_name_before_ray_is_touched(monkeypatch):
    # Ray made unimportable: the refusal comes first, whether or not Ray is installed, and starts nothing.
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run("bulk-10m", backend="linux", executor="ray")
    msg = str(e.value)
    assert msg.startswith('executor "ray" with backend "linux": refused: '), msg
    assert 'accepted: backend "sim" on Ray, or executor "local" for backend "linux"' in msg
