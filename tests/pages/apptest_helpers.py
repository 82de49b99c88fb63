"""AppTest does not index st.dataframe by key; find a frame by the columns it shows."""


def frame(at, *columns):
    for df in at.dataframe:
        value = df.value
        if all(c in value.columns for c in columns):
            return value
    raise LookupError(f"no dataframe with columns {columns}")
