"""analyse/figures.overlaps, the plan-error scan, is a sweep over lifetimes (linear in regions for
a sound plan, issue 39); here it is held to the definition, written out by hand as a scan of
every pair: two regions of some size share bytes ([offset, offset + size) intersect) while both
are live (persistent regions always; planned ones when first_use <= other.last_use and
other.first_use <= last_use, inclusive scopes, TFLM's allocation_info.cc), reported once, the one
at the lower offset first (ties in table order), in that order."""
from hypothesis import given
from hypothesis import strategies as st

from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import abi
from arenascope_plugin.decode.descriptor import Arena, Region

NONE = abi.USE_NONE


def arena_of(regions):
    return Arena(index=0, base_addr=0x20000000, regions_addr=0, model_addr=0, size=1 << 24, head=0, temp=0,
                 tail=0, model_size=0, canary=None, alignment=16, region_count=len(regions),
                 region_capacity=len(regions), flags=0, regions=regions)


def every_pair(regions):
    """The definition: every pair, in the order of their offsets (a stable sort)."""
    def live_together(a, b):
        planned = a.first_use != NONE and a.last_use != NONE and b.first_use != NONE and b.last_use != NONE
        return not planned or (a.first_use <= b.last_use and b.first_use <= a.last_use)
    ordered = sorted(regions, key=lambda r: r.offset)
    return [(a.index, b.index, b.offset, min(a.offset + a.size, b.offset + b.size))
            for i, a in enumerate(ordered) for b in ordered[i + 1:]
            if a.size and b.size and b.offset < a.offset + a.size and live_together(a, b)]


def as_tuples(found):
    return [(o.a, o.b, o.start, o.end) for o in found]


uses = st.one_of(st.just(NONE), st.integers(0, 12))
region = st.tuples(st.integers(0, 40).map(lambda k: 8 * k), st.sampled_from([0, 4, 8, 16, 24, 64]), uses, uses)


@given(st.lists(region, max_size=40))
def test_the_sweep_finds_exactly_the_pairs_of_the_definition(rows):
    regions = [Region(index=i, offset=o, size=n, id=i, kind="tensor", flags=0, first_use=f, last_use=la)
               for i, (o, n, f, la) in enumerate(rows)]
    assert as_tuples(figures.overlaps(arena_of(regions))) == every_pair(regions)


def test_a_sound_chain_of_100000_buffers_on_reused_offsets_has_none_and_takes_no_pairwise_time():
    # A chain's greedy plan: tensor t lives over scopes t-1..t+1 at one of three offsets, so each
    # offset is shared by 33,334 tensors at different times (a pairwise scan: ~1.7e9 pairs); the
    # tail: 1,000 persistent regions above. A sound plan: no overlap.
    n = 100_000
    regions = [Region(index=i, offset=(i % 3) * 512, size=512, id=i, kind="tensor", flags=0,
                      first_use=max(i - 1, 0), last_use=i + 1) for i in range(n)]
    regions += [Region(index=n + j, offset=4096 + 32 * j, size=32, id=0xFFFF, kind="persistent", flags=0,
                       first_use=NONE, last_use=NONE) for j in range(1000)]
    assert figures.overlaps(arena_of(regions)) == []  # (the quadratic scan ran for minutes: bench_plugin's figures)
    # Tensor 50,000 (live 49,999..50,001) moved to offset 0: there it shares bytes with tensor
    # 49,998 (offset 0, live 49,997..49,999: scope 49,999 in common) and 50,001 (offset 0, live
    # 50,000..50,002), and nothing else; in table order at offset 0.
    regions[50_000] = Region(index=50_000, offset=0, size=512, id=50_000, kind="tensor", flags=0,
                             first_use=49_999, last_use=50_001)
    assert as_tuples(figures.overlaps(arena_of(regions))) == [(49_998, 50_000, 0, 512), (50_000, 50_001, 0, 512)]
