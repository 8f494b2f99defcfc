import pytest

from lm_eval_rul.mcqa import make_doc, make_docs, shuffled_options
from lm_eval_rul.mcqa.tasks import load_muchomusic, load_rul_muchomusic
from lm_eval_rul.questions import DataValidationError, read_rul_json


@pytest.fixture()
def questions(data_dir):
    return read_rul_json(data_dir / "rul.json")


@pytest.mark.parametrize("fold", [0, 1, 2, 3])
def test_fold_drops_distractor_k(questions, fold):
    for q in questions:
        doc = make_doc(q, benchmark="rul_muchomusic", fold=fold)
        assert doc["dropped_distractor"] == q.distractors[fold]
        assert sorted(doc["options"]) == sorted(
            [q.correct_answer, *[d for i, d in enumerate(q.distractors) if i != fold]]
        )
        assert doc["options"][doc["gold"]] == q.correct_answer
        assert doc["gold_letter"] == "ABCD"[doc["gold"]]
        assert len(set(doc["options"])) == 4


def test_no_fold_shows_every_distractor(questions):
    doc = make_doc(questions[0], benchmark="muchomusic", fold=None)
    assert doc["fold"] == -1 and len(doc["options"]) == 5 and doc["letters"][-1] == "E"


def test_order_depends_on_item_not_on_data_order(questions):
    forward = {d["id"]: d["options"] for d in make_docs(questions, benchmark="b", fold=1)}
    backward = {d["id"]: d["options"] for d in make_docs(questions[::-1], benchmark="b", fold=1)}
    subset = {d["id"]: d["options"] for d in make_docs(questions[3:5], benchmark="b", fold=1)}
    assert forward == backward
    assert all(forward[k] == v for k, v in subset.items())


def test_order_varies_with_fold_seed_and_item():
    options, gold = shuffled_options("c", ["d1", "d2", "d3"], seed=1, key=("b", "1", 0))
    assert options[gold] == "c"
    orders = {
        tuple(shuffled_options("c", ["d1", "d2", "d3"], seed=s, key=("b", i, f))[0])
        for s in (1, 2)
        for i in ("1", "2")
        for f in (0, 1)
    }
    assert len(orders) > 1


def test_gold_position_is_roughly_balanced():
    golds = [
        shuffled_options("c", ["a", "b", "d"], seed=0, key=("b", str(i), 0))[1] for i in range(400)
    ]
    counts = [golds.count(k) for k in range(4)]
    assert min(counts) > 60, counts


def test_fold_out_of_range_is_named(questions):
    with pytest.raises(ValueError, match="question '2': fold 4 needs at least 5 distractors"):
        make_doc(questions[0], benchmark="b", fold=4)


def test_task_loader_reads_metadata_and_seed(data_dir):
    docs = load_rul_muchomusic(2, data_path=str(data_dir / "rul.json"), version=1.0)["test"]
    assert len(docs) == 8 and set(docs["fold"]) == {2}
    again = load_rul_muchomusic(2, rul_data_path=str(data_dir / "rul.json"))["test"]
    assert docs["options"] == again["options"]
    other = load_rul_muchomusic(2, data_path=str(data_dir / "rul.json"), shuffle_seed=7)["test"]
    assert docs["options"] != other["options"]
    with pytest.raises(FileNotFoundError, match="data_path='/nope.json': no such file"):
        load_rul_muchomusic(0, data_path="/nope.json")
    with pytest.raises(DataValidationError, match="a run of both benchmarks gives each its own"):
        load_muchomusic(data_path=str(data_dir / "rul.json"))
    with pytest.raises(DataValidationError, match="rul_muchomusic. tasks read the RUL-MuChoMusic"):
        load_rul_muchomusic(0, data_path=str(data_dir / "muchomusic.csv"))
    # a seed given as text or an integral float is read as that integer
    text = load_rul_muchomusic(2, data_path=str(data_dir / "rul.json"), shuffle_seed="7")["test"]
    whole = load_rul_muchomusic(2, data_path=str(data_dir / "rul.json"), shuffle_seed=7.0)["test"]
    assert text["options"] == whole["options"] == other["options"]


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("shuffle_seed", "x", "shuffle_seed must be an integer, got 'x'"),
        ("shuffle_seed", True, "shuffle_seed must be an integer, got True"),  # not 1
        ("shuffle_seed", 1.5, "shuffle_seed must be an integer, got 1.5"),  # not cut to 1
        ("shuffle_seed", None, "shuffle_seed must be an integer, got None"),
        ("shuffle_seed", [1], "shuffle_seed must be an integer, got \\[1\\]"),
        ("parser", "nope", "parser='nope' is not a parser"),
        ("parser", ["release"], "parser=\\['release'\\] is not a parser"),
    ],
)
def test_bad_metadata_values_are_user_errors_naming_the_key(data_dir, key, value, message):
    """A bad ``--metadata`` value is a one-line error (exit 2), never a traceback."""
    from lm_eval_rul.errors import UserInputError

    for load in (lambda **m: load_rul_muchomusic(0, **m), load_muchomusic):
        data = data_dir / ("rul.json" if load is not load_muchomusic else "muchomusic.csv")
        with pytest.raises(UserInputError, match=message):
            load(data_path=str(data), **{key: value})


def _pi_sorted_questions(n: int) -> list:
    """A benchmark sorted by PI, highest first, as the released RUL-MuChoMusic file is."""
    from lm_eval_rul.questions import Question

    return [
        Question(str(i), f"q{i}?", "right", ("w1", "w2", "w3", "w4"), pi=1 - i / n)
        for i in range(n)
    ]


def test_limit_takes_a_seeded_sample_of_the_whole_benchmark():
    """``--limit N`` takes the first N documents: they are a seeded sample spread over the
    file, not its head (the highest PI), the same N whatever the file's order, and the
    same questions in every fold."""
    questions = _pi_sorted_questions(400)
    whole = sum(q.pi for q in questions) / len(questions)
    folds = [make_docs(questions, benchmark="rul_muchomusic", fold=f) for f in range(4)]
    first = [d["id"] for d in folds[0][:40]]
    head_pi = sum(d["source_pi"] for d in folds[0][:40]) / 40
    assert abs(head_pi - whole) < 0.08, head_pi
    assert first != [q.id for q in questions[:40]]
    assert all([d["id"] for d in docs[:40]] == first for docs in folds)
    shuffled = make_docs(questions[::-1], benchmark="rul_muchomusic", fold=0)
    assert [d["id"] for d in shuffled[:40]] == first
    assert [d["id"] for d in make_docs(questions, benchmark="muchomusic", fold=None)[:40]] == first
    other_seed = make_docs(questions, benchmark="rul_muchomusic", fold=0, seed=7)
    assert [d["id"] for d in other_seed[:40]] != first
    assert set(d["id"] for d in folds[0]) == {q.id for q in questions}
