"""The hostile-input fuzz campaigns (issue 38), run in a child process by tests/io/test_fuzz_hostile.py.

``python fuzz_campaigns.py NAME ROOT N`` runs campaign NAME for N examples with files under ROOT, each
example under an alarm (a hang is counted, not waited for) and the whole process under an address-space
limit; it prints one JSON line: counts of accepted / refused cases, every traceback and hang (type and
message), and the files under ROOT changed outside ROOT/out.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import resource
import signal
import struct
import sys
from pathlib import Path

CASE_SECONDS = 60  # CPU seconds per example (ITIMER_PROF: waiting for a busy machine's cores does not count)
ADDRESS_SPACE = 3 * 2**30  # torch and transformers reserve ~1 GB of address space when imported


class Hang(BaseException):
    """Raised by the alarm: BaseException, so no ``except Exception`` in the code under test swallows it."""


def _alarm(_sig, _frame):
    raise Hang()


CURRENT = {"case": ""}  # what the running case is reading, for the report of a problem


def _note(doc) -> None:
    CURRENT["case"] = repr(doc)[:300]


def file_state(root: Path) -> dict:
    """path → sha256 of every file under ``root`` except ``root/out`` (what a case may write)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink() and "out" not in p.relative_to(root).parts[:1]:
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# -- values a hostile file holds ------------------------------------------------------------------------------
def hostile_values(st):
    weird_text = st.sampled_from(["", "\ud800", "a\udfffb", "\ufeff", "x" * 5000, "../../etc/passwd", "/etc/passwd",
                                  "sample:none", "é", "\x00", "{title}", "{here:.99999f}"])
    scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
               | st.sampled_from([0, 1, -1, 4, 5, 10**7, 2**63, 10**30])
               | st.floats(allow_nan=True, allow_infinity=True)
               | st.sampled_from([math.inf, -math.inf, math.nan, 1e-308, 1e308, 0.5, -0.0])
               | st.text(max_size=20) | weird_text)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)


def _mostly(st):
    def mostly(valid, hostile=None):
        # valid in 5 of 6 draws: most cases get past the first check and reach the deeper ones
        hostile = hostile_values(st) if hostile is None else hostile
        return st.integers(0, 5).flatmap(lambda i: hostile if i == 0 else valid)

    return mostly


def _dump(doc) -> str:
    # allow_nan: Python writes NaN/Infinity, as a colleague's script would; surrogates escaped as \\udXXX
    return json.dumps(doc, allow_nan=True)


# -- campaigns ---------------------------------------------------------------------------------------------------
def scenes(st, root: Path):
    """Scene and lesson files with fuzzed keys and claim parameters, read as `lesson check` and `export
    --scene` read them; an accepted rollout-pointing claim runs its probe search."""
    from attnviz.lessons.claim_params import CLAIM_PARAMS

    keys = sorted({k for spec in CLAIM_PARAMS.values() for k in spec}) + ["zzz"]
    kinds = sorted(CLAIM_PARAMS) + ["nope"]

    mostly = _mostly(st)
    plausible = st.sampled_from([0.5, 0.9, 1, 3, 8, 0, 4, 5, -1, "large", "offcentre", "animal", "coref", 2**31])
    claim = st.fixed_dictionaries({"kind": mostly(st.sampled_from(kinds))},
                                  optional={k: mostly(plausible) for k in keys})
    model = mostly(st.sampled_from(["shapes", "coref", str(root / "model")]))
    inputs = mostly(st.sampled_from([{"text": "it was tired"}, {"image": "sample:shapes-star"}]),
                    st.fixed_dictionaries({}, optional={"text": hostile_values(st), "image": hostile_values(st)}))
    rest = st.fixed_dictionaries({}, optional={
        "title": mostly(st.just("a title")), "caption": mostly(st.just("held {held}")),
        "layer": mostly(st.integers(0, 3)), "claim": claim,
        "whatif": st.fixed_dictionaries({}, optional={"temperature": mostly(st.floats(0.01, 100)),
                                                      "ablate": mostly(st.just([[0, 1]]))})})
    scene = st.builds(lambda m, i, r: {"model": m, **i, **r}, model, inputs, rest)

    def case(data):
        from attnviz.lessons.lesson import load_lesson
        from attnviz.lessons.named_inputs import named_inputs

        doc = data.draw(scene)
        _note(doc)
        as_lesson = data.draw(st.booleans())
        bom = data.draw(st.booleans())
        path = root / "out" / "shared.json"
        text = _dump({"format": "attnviz-lesson", "scenes": [{"title": "t", **doc}]} if as_lesson
                     else {"format": "attnviz-scene", **doc})
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"))
        if as_lesson:
            scenes_read = load_lesson(path).scenes
        else:
            from attnviz.lessons.scene import load_scene

            scenes_read = [load_scene(path)]
        for s in scenes_read:
            named_inputs([s])
            s.whatif_switches()
            print(s.title, s.caption, file=open(os.devnull, "w", encoding="utf-8"))  # printable: valid text
            if s.claim and s.claim["kind"] == "rollout-pointing" and "label" in s.claim:
                from attnviz.tasks.shapes import ShapesTask

                ShapesTask._probe(s.claim["label"], s.claim.get("layout", "large"))

    return case


def configs(st, root: Path):
    """Hugging Face configs of every family with fuzzed sizes, loaded as `--model FOLDER` loads them."""
    from attnviz.hf.config_bounds import SIZE_LIMITS
    from attnviz.hf.families import FAMILIES

    types = sorted(FAMILIES) + ["t5", "bart", "marian", "llama", "mistral", "qwen2", "gemma", "clip", "unknown"]
    sizes = st.sampled_from([1, 2, 4, 8, 0, -1, 10**7, 10**12, 2.0, 2.5, "8", None, [2], {"a": 1}, True])
    config = st.fixed_dictionaries({"model_type": st.sampled_from(types)},
                                   optional={**{k: sizes for k in SIZE_LIMITS},
                                             "architectures": st.lists(st.sampled_from(
                                                 ["BertModel", "GPT2LMHeadModel", "T5Model", "Nope", ""]), max_size=2),
                                             "text_config": st.dictionaries(st.sampled_from(sorted(SIZE_LIMITS)),
                                                                            sizes, max_size=3),
                                             "auto_map": st.integers(0, 5).map(lambda i: {"AutoModel": "x.Y"}
                                                                                  if i == 0 else None)})

    def case(data):
        from attnviz.hf.loader import load_hf_model

        folder = root / "out" / "hf"
        folder.mkdir(parents=True, exist_ok=True)
        doc = data.draw(config)
        _note(doc)
        (folder / "config.json").write_text(_dump(doc), encoding="utf-8")
        header = b'{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
        (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
        load_hf_model(folder, device="cpu")

    return case


def weights(st, root: Path):
    """safetensors headers and shard indexes with fuzzed structure, counted as the loader counts them."""
    mostly = _mostly(st)
    entry = st.fixed_dictionaries({"dtype": mostly(st.sampled_from(["F32", "F16", "I8", "U16", "Q4"])),
                                   "shape": mostly(st.lists(st.integers(0, 4), max_size=3),
                                                   st.lists(st.integers(-2, 2**50), max_size=9) | hostile_values(st)),
                                   "data_offsets": mostly(st.just([0, 4]), st.lists(st.integers(-1, 2**64), max_size=3)
                                                          | hostile_values(st))})
    header = mostly(st.dictionaries(st.text(max_size=6), mostly(entry), max_size=4))
    shard = st.sampled_from(["model-1.safetensors", "../outside.safetensors", "/etc/passwd", "", "a/../../b",
                             "sub/x.safetensors"]) | hostile_values(st)
    index = st.fixed_dictionaries({}, optional={"weight_map": st.dictionaries(st.text(max_size=4), shard, max_size=3)
                                                | hostile_values(st)}) | hostile_values(st)

    def case(data):
        from attnviz.hf.detect import detect_hf_folder
        from attnviz.hf.loader import weights_numel

        folder = root / "out" / "w"
        if folder.exists():
            for p in folder.iterdir():
                p.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
        if data.draw(st.booleans()):
            raw = _dump(data.draw(header)).encode("utf-8", "surrogatepass")
            if data.draw(st.integers(0, 5)) == 0:
                raw = raw[: data.draw(st.integers(0, len(raw)))]
            n = data.draw(mostly(st.just(len(raw)), st.sampled_from([len(raw) + 1, 0, 2**63, 2**64 - 1])))
            body = data.draw(st.binary(min_size=0, max_size=64))
            (folder / "model.safetensors").write_bytes(struct.pack("<Q", n) + raw + body)
        else:
            (folder / "model.safetensors.index.json").write_bytes(_dump(data.draw(index)).encode("utf-8", "surrogatepass"))
            (folder / "model-1.safetensors").write_bytes(struct.pack("<Q", 2) + b"{}")
        weights_numel(detect_hf_folder(folder))

    return case


def api(st, root: Path):
    """The Python API's arguments: save paths (existing files, model folders, links), texts, images."""
    import numpy as np

    import attnviz

    model = attnviz.load(str(root / "model"), device="cpu")
    vit = attnviz.load(str(root / "vit"), device="cpu")
    traced = model.trace("the animal did not cross the street because it was tired")
    targets = st.sampled_from([root / "model" / "config.json", root / "model" / "new.npz", root / "users.npz",
                               root / "users.html", root / "out" / "t.npz", root / "out" / "p.html",
                               root / "out" / "no" / "x.npz", root / "out", root / "link.npz", root / "model"])
    arrays = st.sampled_from([(0, 0), (1, 1), (2, 2, 5), (3, 3, 3), (20000, 20000), (8, 8, 1)])

    def case(data):
        kind = data.draw(st.sampled_from(["save", "html", "text", "image"]))
        target = data.draw(targets)
        _note((kind, target))
        # force=True may replace the user's own files by design: asked for only where it must still refuse
        # (the model the trace came from) or may write (the output folder)
        users = target.parent == root and target.name.startswith(("users", "link"))
        force = data.draw(st.booleans()) and not users
        if kind == "save":
            traced.save(target, force=force)
        elif kind == "html":
            traced.html().save(target, force=force)
        elif kind == "text":
            model.trace(data.draw(st.text(max_size=30) | st.sampled_from(["\ud800", "", " " * 10, "x" * 5000])))
        else:
            shape = data.draw(arrays)
            dtype = data.draw(st.sampled_from([np.uint8, np.float32, np.float64, np.int64, bool]))
            vit.trace(text=None, image=np.broadcast_to(np.zeros((), dtype), shape))

    return case


CAMPAIGNS = {"scenes": scenes, "configs": configs, "weights": weights, "api": api}


def main(name: str, root: str, n: int) -> dict:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from attnviz.errors import AttnvizError

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    signal.signal(signal.SIGPROF, _alarm)
    root = Path(root)
    (root / "out").mkdir(exist_ok=True)
    before = file_state(root)
    case = CAMPAIGNS[name](st, root)
    counts = {"accepted": 0, "refused": 0}
    problems: list[str] = []
    reasons: dict[str, int] = {}

    @settings(max_examples=n, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        signal.setitimer(signal.ITIMER_PROF, CASE_SECONDS)
        CURRENT["case"] = ""
        try:
            case(data)
            counts["accepted"] += 1
        except AttnvizError as exc:
            counts["refused"] += 1
            why = str(exc).split(": ")[1 if "shared.json" in str(exc).split(": ")[0] else 0][:40]
            reasons[why] = reasons.get(why, 0) + 1
            if "\n" in str(exc) or "Traceback" in str(exc):
                problems.append(f"multi-line refusal: {str(exc)[:300]}")
        except Hang:
            problems.append(f"hang: a case ran past the alarm: {CURRENT['case']}")
        except Exception as exc:  # a traceback the user would see
            import traceback

            where = traceback.extract_tb(exc.__traceback__)[-1]
            problems.append(f"{type(exc).__name__}: {str(exc)[:300]} ({where.filename}:{where.lineno}) "
                            f"{CURRENT['case']}")
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)

    run()
    after = file_state(root)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    return {**counts, "reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])[:8]), "problems": problems[:20], "n_problems": len(problems), "changed": changed,
            "peak_mb": _own_peak_kib() / 1024}


def _own_peak_kib() -> int:
    """This process's own peak resident memory (VmHWM); getrusage's ru_maxrss survives exec and could report
    the parent's peak."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
