"""Coverage: which (scenario cluster × skill category) cells sampled paths visit; samplers compared."""
import pandas as pd
import streamlit as st

from analysis import coverage_views as cv
from pages import cached
from pages.shared import provider_note, workspace
from pipeline.graph.assemble import assemble
from workbench.store import graph as store

ws = workspace()
st.title("Coverage")
st.caption(provider_note())

batches = cached.sample_batches(ws)
if batches.empty:
    st.info("No paths sampled yet. Build the graph, then run e.g. "
            "`workbench sample --sampler inverse-frequency --n 200` and `--sampler random-walk`.")
    st.stop()
labels = cv.batch_labels(batches)
ids = batches["batch_id"].tolist()  # newest first
n_paths = dict(zip(batches["batch_id"], batches["paths"].astype(int)))


@st.cache_data(ttl=3600, max_entries=16)
def _steps(_ws, root: str, batch_id: str) -> pd.DataFrame:
    return store.path_steps(_ws.db, batch_id)  # a batch never changes once stored


@st.cache_data(ttl=3600, max_entries=16)
def _cells(_ws, root: str, batch_id: str, build_id: str, max_paths: int | None = None) -> pd.DataFrame:
    return store.coverage_cells(_ws.db, batch_id, max_paths)  # cluster texts change with the build


@st.cache_data(ttl=3600, max_entries=4)
def _pair_universe(_ws, root: str, build_id: str) -> int | None:
    """Distinct (cluster, skill) transitions of the current graph; None when there is none."""
    try:
        return assemble(_ws.db).transitions.pair_universe()
    except ValueError:
        return None


build = cached.last_build(ws)
build_id = build["build_id"] if build else ""

# --- one batch ---------------------------------------------------------------------------------
st.subheader("Visits per scenario cluster × skill category")
pick = st.selectbox("Batch (sampler · paths · time)", ids, format_func=labels.get, key="cov_batch")
cells = _cells(ws, str(ws.root), pick, build_id)
if cells.empty:
    st.write("This batch has no steps.")
else:
    matrix = cv.heatmap_matrix(cells, top=cv.HEATMAP_ROWS)
    n_clusters = cells["cluster"].nunique(dropna=False)
    st.caption(f"The {len(matrix)} most visited of {n_clusters:,} visited clusters (rows, most visited first); "
               f"a step counts for the cluster it starts from and its skill's category; blank cells were not visited.")
    st.plotly_chart(cv.coverage_heatmap(matrix, label_len=70), width="stretch", key="heatmap")

# --- two batches side by side --------------------------------------------------------------------
st.subheader("Two batches side by side")
left_default, right_default = cv.default_pair(batches)
c1, c2 = st.columns(2)
left = c1.selectbox("Left", ids, index=ids.index(left_default), format_func=labels.get, key="cov_left")
right = c2.selectbox("Right", ids, index=ids.index(right_default), format_func=labels.get, key="cov_right")
chosen = list(dict.fromkeys([left, right, pick]))  # every batch compared below
equal = st.toggle("Equal budget", value=True, key="cov_equal_budget",
                  help="Cut every batch compared to the first paths of the smallest one")
budget = cv.equal_budget({b: n_paths[b] for b in chosen}) if equal else None
st.info(cv.budget_note({labels[b]: n_paths[b] for b in chosen}, budget), icon=":material/balance:")
cells_l, cells_r = (_cells(ws, str(ws.root), b, build_id, budget) for b in (left, right))
m_l, m_r = cv.heatmap_pair(cells_l, cells_r, top=cv.HEATMAP_ROWS)
st.caption("The same rows (the most visited clusters over both batches), columns and colour scale on both sides; "
           "blank cells were not visited.")
st.plotly_chart(cv.coverage_heatmap_pair(m_l, m_r, (labels[left], labels[right])), width="stretch",
                key="heatmap_pair")

# --- growth and metrics ----------------------------------------------------------------------------
steps = {labels[b]: cv.first_paths(_steps(ws, str(ws.root), b), budget) for b in chosen}
universe, widened = cv.effective_universe(_pair_universe(ws, str(ws.root), build_id),
                                          pd.concat(steps.values(), ignore_index=True))

st.subheader("Coverage growth")
curves = cv.growth_curves(steps, {labels[b]: n_paths[b] if budget is None else budget for b in chosen})
st.plotly_chart(cv.growth_figure(curves, universe), width="stretch", key="growth")

st.subheader("Metrics")
metrics = cv.batch_metrics(steps, universe)
st.dataframe(metrics, hide_index=True, width="stretch", key="metrics",
             column_config={"batch": st.column_config.TextColumn(width="large"),
                            "unique_pairs": st.column_config.NumberColumn("unique pairs"),
                            "coverage": st.column_config.NumberColumn(format="percent"),
                            "normalized_entropy": st.column_config.NumberColumn("normalised entropy",
                                                                                format="%.3f"),
                            "gini": st.column_config.NumberColumn("Gini", format="%.3f"),
                            "kl_to_uniform": st.column_config.NumberColumn("KL to uniform (nats)",
                                                                           format="%.3f")})
note = (f"Universe: the {universe:,} distinct (scenario cluster, skill) transitions of the current graph.")
if widened:
    note = (f"Universe widened to {universe:,} pairs: some batches were sampled on an earlier graph and "
            f"hold pairs the current graph no longer has.")
elif not build:
    note = f"Universe: the {universe:,} distinct pairs of the batches shown (no graph build found)."
st.caption(note + " Entropy is normalised by log(universe); Gini counts unseen pairs as zeros; "
                  "KL is to the uniform distribution over the universe.")
