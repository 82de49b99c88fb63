"""AppTest does not index st.dataframe or st.plotly_chart by key; find them by what they show."""
from __future__ import annotations

import base64
import json

import numpy as np


def frame(at, *columns):
    for df in at.dataframe:
        value = df.value
        if all(c in value.columns for c in columns):
            return value
    raise LookupError(f"no dataframe with columns {columns}")


def chart(at, key: str) -> dict:
    """The figure JSON of the plotly chart with ``key``."""
    charts = [json.loads(el.proto.spec) for el in at.get("plotly_chart") if key in el.proto.id]
    assert charts, f"no plotly chart with key {key}: {[el.proto.id for el in at.get('plotly_chart')]}"
    return charts[0]


def plotly_array(value) -> np.ndarray:
    """A plotly array from a figure's JSON: a list, or {"dtype", "bdata"[, "shape"]} (base64)."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return arr.reshape([int(x) for x in str(shape).split(",")]) if shape else arr
    return np.asarray(value)
