"""The question budget's arithmetic (llm/budget_arithmetic.py): pure functions over token counts,
checked with numbers worked by hand."""

from __future__ import annotations

from longqa.llm import budget_arithmetic as a


def _overheads(**changes: int) -> a.Overheads:
    base = dict(analyze=50, split=80, filter=90, judge=40, extract=60, reason=100, generate=200, long_context=120)
    return a.Overheads(**{**base, "per_passage": 0, **changes})


def test_a_call_keeps_back_what_later_calls_need_within_its_share():
    assert a.call_cap(None, 0, 50) is None  # no budget
    assert a.call_cap(1000, 600, 250) == 350
    assert a.call_cap(1000, 200, 250) == 0  # never below nothing
    assert a.call_cap(1000, 600, 0, share=0.35) == 350 and a.call_cap(1000, 300, 0, share=0.35) == 300
    assert a.left(1000, [{"input_tokens": 300}, {"input_tokens": None}]) == 700 and a.left(0, []) is None


def test_the_lowest_scored_items_are_dropped_until_the_prompt_fits():
    items = [{"id": "a", "score": 3}, {"id": "b", "score": 1}, {"id": "c", "score": 2}]

    def cost(kept: list) -> int:
        return 10 + 30 * len(kept)

    kept, size = a.drop_until_fits(items, cost, 75, lambda i: i["score"])
    assert [i["id"] for i in kept] == ["a", "c"] and size == 70  # in their order, b dropped
    assert a.drop_until_fits(items, cost, 5, lambda i: i["score"]) == ([], 10)


def test_a_cut_shrinks_by_what_it_was_over_and_gives_up_at_nothing():
    assert a.cut_until_fits(100, lambda t: t + 20, 90) == (70, 90)  # 120 is 30 over: cut to 70
    assert a.cut_until_fits(100, lambda t: t + 20, 118) == (92, 112)  # 2 over: at least 8 off
    assert a.cut_until_fits(100, lambda t: t + 200, 90) is None and a.cut_until_fits(0, lambda t: t, 90) is None


def test_per_item_calls_are_paid_in_turn_passing_over_one_that_does_not_fit():
    assert a.paid_in_turn([40, 50, 20, 30], 100) == [0, 1]  # 40 + 50: 20 and 30 do not fit the 10 left
    assert a.paid_in_turn([40, 70, 20, 30], 100) == [0, 2, 3]  # 70 passed over, 20 and 30 fit
    assert a.paid_in_turn([None, 10**6], None) == [0, 1]


def test_the_long_context_room_within_its_window_and_the_budget():
    assert a.window_room(8000, 500, 300) == 7200 and a.window_room(8000, 500, 300, room=1000) == 1000
    assert a.window_room(600, 500, 300) == 0
    assert a.long_context_room(None, 1.0, 10) is None and a.long_context_room(1200, 1.5, 300) == 500
    assert a.over_window(7600, 500, 8000) and not a.over_window(7500, 500, 8000)
    assert a.counted_room(1000, 10000, 8000, 500) == int(1000 * 7500 / 10000 * 0.95)
    assert a.counted_room(1000, 2000, 8000, 500) == 950  # it fits: only the 5% to spare
    # the server said nothing: our size (content + the prompt's instructions) with a quarter more
    assert a.refused_room(1000, None, None, 1500, 500) == int(1000 * 1000 / 1500 * 0.95)
    assert a.refused_room(1000, 4000, 2500, 8000, 500) == int(1000 * 2000 / 4000 * 0.95)
    assert a.fits_whole([100, 200], 310, 5) and not a.fits_whole([100, 200], 309, 5)
    assert a.fill_in_order([100, 50, 10], 160, 5) == (2, 160) and a.fill_in_order([300, 10], 160, 5) == (0, 0)


def test_a_fallback_that_reads_no_more_than_retrieval_is_short():
    assert a.fallback_shortfall(500, 120, 150, 600) == (500, 721)
    assert a.fallback_shortfall(900, 120, 150, 600) is None
    assert a.fallback_shortfall(10, 0, 150, 600) is None  # no plan sized it: nothing to compare


def test_the_plan_reads_by_route():
    o = _overheads()

    class Route:
        workflow, filter, filter_mode, extract, granularity, max_hops = "direct", False, "joint", False, 100, 4

    class Reads:
        has_llm, cot_max_tokens, extract_max_tokens = True, 128, 256

    assert a.evidence_tokens(Route, o, Reads, 1200) == 1000  # the generator's one read
    Route.filter = True
    assert a.evidence_tokens(Route, o, Reads, 1290) == 500  # and the joint filter's
    Route.workflow = "stepwise"
    assert a.evidence_tokens(Route, o, Reads, 1200) == int((1200 - 2 * (100 + a.NOTE_TOKENS) - 200) / 4) * 4
    assert a.route_need(o, 100, [{"input_tokens": 50}]) == int(300 / (1 - a.SAFETY)) + 50
    assert a.planned_evidence(None, 5, 100, 2) == 1000 and a.planned_evidence(700, 5, 100, 2) == 700
    assert a.per_query(1000, 4) == 250 and a.per_query(None, 4) is None
    assert a.holds_a_chunk(64, 150) and not a.holds_a_chunk(63, 150) and a.evidence_floor(150) == 300


def test_our_counts_in_the_models_tokens():
    assert a.by_the_model(100, 1.0) == 100 and a.by_the_model(100, 1.26) == 126
    assert a.text_room(1000, 1.25, 50) == 750  # 800 of ours fit 1,000 of the model's, less the rest
