"""bench/search_profile.py: its timers see every batch the search evaluates, the phases fit in
the seconds they are shares of, and the CPU is named. A short self-play game on the shipped
net, not a timing."""

from dosaku.bench import search_profile
from dosaku.bench.runner import cpu_kind

AVX2_ONLY = "model name\t: AMD EPYC 7B13\nflags\t\t: fpu sse2 avx avx2 fma\n"
VNNI = "model name\t: AMD EPYC 9B14\nflags\t\t: avx2 fma avx512f avx512_vnni avx512_bf16\n"


def test_the_timers_count_every_evaluation_and_fit_in_the_search():
    engine, timers = search_profile.play(9, 0.4, 2, [])
    s = timers.seconds
    search = engine.search
    evaluated = sum(n * calls for n, calls in timers.batches.items())
    # the instrumented moves only (play counts from after its thrown-away first genmove):
    # every evaluation the search made since, root evaluations included, went through a call
    assert evaluated > 10 and set(timers.batches) <= set(range(1, search.config.batch_size + 1))
    assert 0.6 <= s["search"] <= s["genmove"] <= 0.4 * 2 + 0.5
    on_evaluators = s["features"] + s["net"] + s["post-processing"]
    assert s["net"] > 0 and on_evaluators <= s["evaluate (whole call)"] + 1e-3
    assert s["evaluate (whole call)"] <= search._parallel * s["search"] + 1e-3
    assert s["select"] + s["backup"] + s["waiting for an evaluation"] <= s["search"]
    alone = search_profile.net_alone(search.evaluator.model, 2, 9, [1, 2], 0.2)
    assert set(alone) == {1, 2} and 0 < alone[1] < alone[2]


def test_the_timers_are_taken_off_after_the_game():
    from dosaku.engine.evaluators import features, onnx_evaluator
    from dosaku.engine.search import backup, driver, selection
    engine, _ = search_profile.play(9, 0.1, 1, [])
    assert driver.select_batch is selection.select_batch
    assert driver.expand_and_backup is backup.expand_and_backup
    assert onnx_evaluator.fill_features is features.fill_features
    assert driver._next_to_back_up.__module__ == driver.__name__
    assert onnx_evaluator.to_evaluation.__module__ == onnx_evaluator.__name__
    for owner in (engine.search, engine.search.evaluator, engine.search.evaluator.model):
        assert not {"run", "evaluate", "_back_up", "_launch"} & set(vars(owner))


def test_the_cpu_kind_names_the_model_and_the_vector_flags():
    assert cpu_kind(AVX2_ONLY) == "AMD EPYC 7B13: avx2 fma"
    assert cpu_kind(VNNI) == "AMD EPYC 9B14: avx2 fma avx512f avx512_vnni avx512_bf16"
    assert cpu_kind("model name\t: Old\nflags\t\t: sse2\n") == "Old: no AVX2"
