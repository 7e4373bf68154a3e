"""Raw-op programs over TensorLists and TensorArrays: values and errors recorded from TF by
tools/golden/control_flow.py and checked here (tests/control_flow/test_list_ops.py).  Data, shared by the tool and
the tests."""
from __future__ import annotations

import numpy as np

from tfops_py import DT_FLOAT, DT_INT32, DT_INT64, PartialTensorShape

F = DT_FLOAT
i32 = np.int32
f32 = np.float32
x23 = np.arange(6, dtype=np.float32).reshape(2, 3)
x42 = np.arange(8, dtype=np.float32).reshape(4, 2) - 3


def reserve(shape=(2,), n=3, dtype=F):
    return ("TensorListReserve", {"element_shape": i32(list(shape)) if shape is not None else i32(-1),
                                  "num_elements": i32(n), "element_dtype": dtype})


def from_tensor(t=x42, shape=(2,)):
    return ("TensorListFromTensor", {"tensor": t, "element_shape": i32(list(shape)) if shape is not None else i32(-1)})


def stack(ref, shape=(2,), dtype=F, n=-1):
    return ("TensorListStack", {"input_handle": ref, "element_shape": i32(list(shape)) if shape is not None
                                else i32(-1), "element_dtype": dtype, "num_elements": n})


def get(ref, index, shape=(2,), dtype=F):
    return ("TensorListGetItem", {"input_handle": ref, "index": i32(index),
                                  "element_shape": i32(list(shape)) if shape is not None else i32(-1),
                                  "element_dtype": dtype})


def set_item(ref, index, item):
    return ("TensorListSetItem", {"input_handle": ref, "index": i32(index), "item": item})


LIST_PROGRAMS: dict[str, tuple[list, list[str]]] = {
    "from_tensor_stack": ([from_tensor(), stack("$0")], ["$1"]),
    "get_items": ([from_tensor(), get("$0", 0), get("$0", 3)], ["$1", "$2"]),
    "set_keeps_the_input_list": ([from_tensor(), set_item("$0", 2, f32([9, 9])), stack("$0"), stack("$1")],
                                 ["$2", "$3"]),
    "reserve_reads_zeros": ([reserve(), set_item("$0", 1, f32([1, 2])), stack("$1"), get("$1", 2)], ["$2", "$3"]),
    "reserve_unknown_shape_infers_from_set": ([reserve(None), set_item("$0", 0, f32([1, 2, 3])),
                                               get("$1", 2, None), stack("$1", None)], ["$2", "$3"]),
    "read_unset_unknown_shape": ([reserve(None), get("$0", 1, None)], ["$1"]),
    "stack_empty_unknown_shape": ([reserve(None, 0), stack("$0", None)], ["$1"]),
    "stack_empty_known_shape": ([reserve((2, 3), 0), stack("$0", (2, 3))], ["$1"]),
    "stack_num_elements_mismatch": ([from_tensor(), stack("$0", n=3)], ["$1"]),
    "get_out_of_range": ([from_tensor(), get("$0", 4)], ["$1"]),
    "get_negative": ([from_tensor(), get("$0", -1)], ["$1"]),
    "set_out_of_range": ([from_tensor(), set_item("$0", 7, f32([1, 1]))], ["$1"]),
    "set_wrong_shape": ([from_tensor(), set_item("$0", 0, f32([1, 1, 1]))], ["$1"]),
    "get_wrong_dtype": ([from_tensor(), get("$0", 0, dtype=DT_INT32)], ["$1"]),
    "reserve_negative": ([reserve(n=-1)], ["$0"]),
    "bad_scalar_shape": ([("TensorListReserve", {"element_shape": i32(3), "num_elements": i32(2),
                                                 "element_dtype": F})], ["$0"]),
    "length_and_element_shape": ([from_tensor(), ("TensorListLength", {"input_handle": "$0"}),
                                  ("TensorListElementShape", {"input_handle": "$0", "shape_type": DT_INT64}),
                                  reserve(None), ("TensorListElementShape", {"input_handle": "$3",
                                                                             "shape_type": DT_INT32})],
                                 ["$1", "$2", "$4"]),
    "push_and_pop": ([("EmptyTensorList", {"element_shape": i32([3]), "max_num_elements": i32(-1),
                                           "element_dtype": F}),
                      ("TensorListPushBack", {"input_handle": "$0", "tensor": x23[0]}),
                      ("TensorListPushBack", {"input_handle": "$1", "tensor": x23[1]}),
                      ("TensorListPopBack", {"input_handle": "$2", "element_shape": i32([3]), "element_dtype": F}),
                      stack("$3:0", (3,)), stack("$2", (3,))], ["$3:1", "$4", "$5"]),
    "pop_empty": ([("EmptyTensorList", {"element_shape": i32([3]), "max_num_elements": i32(-1), "element_dtype": F}),
                   ("TensorListPopBack", {"input_handle": "$0", "element_shape": i32([3]), "element_dtype": F})],
                  ["$1:1"]),
    "push_full": ([("EmptyTensorList", {"element_shape": i32([3]), "max_num_elements": i32(1), "element_dtype": F}),
                   ("TensorListPushBack", {"input_handle": "$0", "tensor": x23[0]}),
                   ("TensorListPushBack", {"input_handle": "$1", "tensor": x23[1]})], ["$2"]),
    "push_wrong_shape": ([("EmptyTensorList", {"element_shape": i32([3]), "max_num_elements": i32(-1),
                                               "element_dtype": F}),
                          ("TensorListPushBack", {"input_handle": "$0", "tensor": x42[0]})], ["$1"]),
    "gather": ([from_tensor(), ("TensorListGather", {"input_handle": "$0", "indices": i32([3, 0, 3]),
                                                     "element_shape": i32([2]), "element_dtype": F})], ["$1"]),
    "gather_out_of_range": ([from_tensor(), ("TensorListGather", {"input_handle": "$0", "indices": i32([4]),
                                                                  "element_shape": i32([2]), "element_dtype": F})],
                            ["$1"]),
    "scatter_v2": ([("TensorListScatterV2", {"tensor": x23, "indices": i32([3, 1]), "element_shape": i32([3]),
                                             "num_elements": i32(5)}), stack("$0", (3,))], ["$1"]),
    "scatter_negative": ([("TensorListScatter", {"tensor": x23, "indices": i32([-1, 1]), "element_shape": i32([3])})],
                         ["$0"]),
    "scatter_into_existing": ([from_tensor(), ("TensorListScatterIntoExistingList",
                                               {"input_handle": "$0", "tensor": x42[:2] * 10, "indices": i32([5, 1])}),
                               stack("$1")], ["$2"]),
    "resize": ([from_tensor(), ("TensorListResize", {"input_handle": "$0", "size": i32(2)}),
                ("TensorListResize", {"input_handle": "$0", "size": i32(6)}), stack("$1"), stack("$2")],
               ["$3", "$4"]),
    "resize_negative": ([from_tensor(), ("TensorListResize", {"input_handle": "$0", "size": i32(-2)})], ["$1"]),
    "concat_v2_and_split": ([("TensorListSplit", {"tensor": np.arange(10, dtype=np.float32).reshape(5, 2),
                                                  "element_shape": i32([-1, 2]), "lengths": np.int64([2, 0, 3])}),
                             ("TensorListConcatV2", {"input_handle": "$0", "element_shape": i32([-1, 2]),
                                                     "leading_dims": np.int64([]), "element_dtype": F})],
                            ["$1:0", "$1:1"]),
    "concat_uninitialized_needs_leading_dims": ([reserve((-1, 2), 2), ("TensorListConcatV2", {
        "input_handle": "$0", "element_shape": i32([-1, 2]), "leading_dims": np.int64([1]), "element_dtype": F})],
        ["$1:0"]),
    "split_bad_lengths": ([("TensorListSplit", {"tensor": x42, "element_shape": i32([-1, 2]),
                                                "lengths": np.int64([1, 1])})], ["$0"]),
}


def ta_create(size=3, dtype=F, **attrs):
    return ("TensorArrayV3", {"size": i32(size), "dtype": dtype, **attrs})


def ta_write(handle, index, value, flow):
    return ("TensorArrayWriteV3", {"handle": handle, "index": i32(index), "value": value, "flow_in": flow})


def ta_read(handle, index, flow, dtype=F):
    return ("TensorArrayReadV3", {"handle": handle, "index": i32(index), "flow_in": flow, "dtype": dtype})


TENSOR_ARRAY_PROGRAMS: dict[str, tuple[list, list[str]]] = {
    "write_read": ([ta_create(), ta_write("$0:0", 2, f32([1, 2]), "$0:1"), ta_read("$0:0", 2, "$1")], ["$2"]),
    "write_twice": ([ta_create(), ta_write("$0:0", 1, f32([1]), "$0:1"), ta_write("$0:0", 1, f32([2]), "$1")],
                    ["$2"]),
    "read_unwritten": ([ta_create(), ta_read("$0:0", 0, "$0:1")], ["$1"]),
    "read_twice_cleared": ([ta_create(), ta_write("$0:0", 0, f32(1), "$0:1"), ta_read("$0:0", 0, "$1"),
                            ta_read("$0:0", 0, "$1")], ["$3"]),
    "read_twice_kept": ([ta_create(clear_after_read=False), ta_write("$0:0", 0, f32(1), "$0:1"),
                         ta_read("$0:0", 0, "$1"), ta_read("$0:0", 0, "$1")], ["$2", "$3"]),
    "write_out_of_range": ([ta_create(), ta_write("$0:0", 3, f32(1), "$0:1")], ["$1"]),
    "dynamic_size_grows": ([ta_create(1, dynamic_size=True), ta_write("$0:0", 4, f32(1), "$0:1"),
                            ("TensorArraySizeV3", {"handle": "$0:0", "flow_in": "$1"})], ["$2"]),
    "wrong_dtype_write": ([ta_create(), ta_write("$0:0", 0, i32(1), "$0:1")], ["$1"]),
    "wrong_dtype_read": ([ta_create(), ta_write("$0:0", 0, f32(1), "$0:1"), ta_read("$0:0", 0, "$1", DT_INT32)],
                         ["$2"]),
    "scatter_gather": ([ta_create(4, element_shape=PartialTensorShape([3])),
                        ("TensorArrayScatterV3", {"handle": "$0:0", "indices": i32([2, 0]), "value": x23,
                                                  "flow_in": "$0:1"}),
                        ("TensorArrayGatherV3", {"handle": "$0:0", "indices": i32([0, 2]), "flow_in": "$1",
                                                 "dtype": F, "element_shape": PartialTensorShape([3])})], ["$2"]),
    "split_concat": ([ta_create(2), ("TensorArraySplitV3", {"handle": "$0:0", "value": x42,
                                                            "lengths": np.int64([3, 1]), "flow_in": "$0:1"}),
                      ("TensorArrayConcatV3", {"handle": "$0:0", "flow_in": "$1", "dtype": F})], ["$2:0", "$2:1"]),
    "split_bad_sum": ([ta_create(2), ("TensorArraySplitV3", {"handle": "$0:0", "value": x42,
                                                             "lengths": np.int64([1, 1]), "flow_in": "$0:1"})],
                      ["$1"]),
    "gather_empty_unknown_shape": ([ta_create(0), ("TensorArrayGatherV3", {
        "handle": "$0:0", "indices": i32([]), "flow_in": "$0:1", "dtype": F})], ["$1"]),
    "grad_reads_zeros_and_sums": ([ta_create(2), ta_write("$0:0", 0, f32([1, 2]), "$0:1"),
                                   ta_write("$0:0", 1, f32([3, 4]), "$1"),
                                   ("TensorArrayGradV3", {"handle": "$0:0", "flow_in": "$2", "source": "g"}),
                                   ta_write("$3:0", 1, f32([1, 1]), "$3:1"), ta_write("$3:0", 1, f32([2, 2]), "$4"),
                                   ta_read("$3:0", 0, "$5"), ta_read("$3:0", 1, "$5")], ["$6", "$7"]),
    "closed": ([ta_create(), ("TensorArrayCloseV3", {"handle": "$0:0"}),
                ("TensorArraySizeV3", {"handle": "$0:0", "flow_in": "$0:1"})], ["$2"]),
}
