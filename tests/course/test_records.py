"""Records (course/gptcourse/checking/records.py): every kind of observation survives dumps/loads, and
large arrays are stored compactly and exactly."""
import json
import math

import numpy as np
import pytest

from gptcourse.checking import records
from gptcourse.checking.records import INLINE_LIMIT, Case


def round_trip(value, indent=None):
    return records.loads(records.dumps(value, indent=indent))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("size", [0, 3, INLINE_LIMIT, INLINE_LIMIT + 1, 1000])
def test_arrays_round_trip_exactly_with_dtype_and_shape(dtype, size):
    rng = np.random.default_rng(size)
    array = np.abs(rng.normal(size=size) * 100).astype(dtype)
    if size and size % 2 == 0:
        array = array.reshape(-1, 2)
    back = round_trip({"a": array})["a"]
    assert back.dtype == array.dtype and back.shape == array.shape
    assert np.array_equal(back, array)


def test_large_float_arrays_are_base64_and_much_smaller_than_a_list():
    array = np.random.default_rng(0).normal(size=(32, 32))
    text = records.dumps({"a": array})
    encoded = json.loads(text)["a"]["__ndarray__"]
    assert "base64" in encoded and "data" not in encoded
    as_list = json.dumps(array.ravel().tolist())
    assert len(text) < 0.7 * len(as_list)
    assert np.array_equal(records.loads(text)["a"], array)  # bit for bit


def test_small_arrays_stay_readable_lists():
    encoded = json.loads(records.dumps(np.arange(6.0).reshape(2, 3)))["__ndarray__"]
    assert encoded["data"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and encoded["shape"] == [2, 3]


def test_nan_and_infinities_round_trip_in_arrays_and_floats():
    array = np.array([np.nan, np.inf, -np.inf, 1.5] * 20)  # above the inline limit
    value = {"small": np.array([np.nan, -np.inf]), "large": array, "loss": float("nan"), "lr": float("inf")}
    back = round_trip(value, indent=1)
    assert np.array_equal(back["small"], value["small"], equal_nan=True)
    assert np.array_equal(back["large"], array, equal_nan=True)
    assert math.isnan(back["loss"]) and back["lr"] == float("inf")


def test_strings_dicts_nested_lists_and_scalars_round_trip():
    value = {
        "text": "spam <|endoftext|> \u00e9\u4e2d \"quoted\" [brackets]",
        "ids": [[40, 367], [2885], []],  # ragged
        "nested": {"inner": {"list": [1, 2.5, None, True, "x"]}},
        "numpy_scalars": [np.float32(0.5), np.int64(7), np.bool_(True)],
    }
    back = round_trip(value, indent=1)
    assert back["text"] == value["text"]
    assert back["ids"] == [[40, 367], [2885], []]
    assert back["nested"] == {"inner": {"list": [1, 2.5, None, True, "x"]}}
    assert back["numpy_scalars"] == [0.5, 7, True]


def test_tuples_come_back_as_lists_and_keys_as_strings():
    assert round_trip({1: (1, 2)}) == {"1": [1, 2]}


def test_objects_that_are_not_plain_data_are_refused():
    with pytest.raises(TypeError):
        records.dumps({"obj": object()})
    with pytest.raises(TypeError):
        records.dumps(np.array(["a", "b"]))  # strings belong in lists, not arrays


def test_a_case_round_trips_through_json():
    case = Case("2.5", "forward", "a label", {"d_in": 3, "calls": [{"method": "encode", "args": ["hi"]}]},
                {"x": np.random.default_rng(1).normal(size=(2, 40)), "ids": np.arange(5)}, "float64", "meta")
    back = Case.from_data(records.loads(records.dumps(case.to_data())))
    assert (back.task, back.kind, back.label, back.args, back.dtype, back.device) == (
        case.task, case.kind, case.label, case.args, case.dtype, case.device)
    assert all(np.array_equal(back.arrays[k], case.arrays[k]) for k in case.arrays)
    assert back.arrays["ids"].dtype == np.int64
