// What TFLM's reference kernels allocate for the operators that move, select or reshape data
// (see kernels.h and kernels_reference.cpp for the rules every kernel shares). Sources are
// tensorflow/lite/micro/kernels/ at tflite-micro 90b983c2; the Parse functions are
// tensorflow/lite/core/api/flatbuffer_conversions.cc Parse<Op>. Sizes {cortex-m, x86-64} are
// sizeof checked with probes compiled against TFLM's headers (docs/arena-budget.md,
// "Operators modelled"); on the Cortex-M, -fshort-enums makes an enum member one byte.
#include "kernels_reference_families.h"

namespace arenascope::planner::rules {

namespace {

// clang-format off
const SimpleRule kRules[] = {
    // pad_common.cc PadInit (OpData), PadPrepare: input, paddings, the constant value of a
    // 3-input PADV2, output. ParsePad / ParsePadV2 allocate nothing.
    {"PAD", {}, {}, nullptr, 56, 56, "pad OpData", "i0 i1 i2 o0"},
    {"PADV2", {}, {}, nullptr, 56, 56, "pad OpData", "i0 i1 i2 o0"},
    // transpose.cc: no Init; transpose_common.cc TransposePrepare (transpose.h TransposeContext).
    {"TRANSPOSE", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
    // ParseSplit; split.cc SplitPrepare: the axis (input 0) only.
    {"SPLIT", {4, 4}, {4, 4}, "TfLiteSplitParams", 0, 0, nullptr, "i0"},
    // ParseSplitV; split_v.cc SplitVPrepare: the axis (input 2) only.
    {"SPLIT_V", {4, 4}, {4, 4}, "TfLiteSplitVParams", 0, 0, nullptr, "i2"},
    // ParsePack / ParseUnpack; pack.cc, unpack.cc: Eval only.
    {"PACK", {8, 4}, {8, 4}, "TfLitePackParams", 0, 0, nullptr, ""},
    {"UNPACK", {8, 4}, {8, 4}, "TfLiteUnpackParams", 0, 0, nullptr, ""},
    // slice.cc SlicePrepare: input, begin, size, output.
    {"SLICE", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 i2 o0"},
    // ParseSqueeze; squeeze.cc SqueezePrepare (SqueezeContext).
    {"SQUEEZE", {36, 4}, {36, 4}, "TfLiteSqueezeParams", 0, 0, nullptr, "i0 o0"},
    // expand_dims.cc ExpandDimsPrepare: input, axis, output.
    {"EXPAND_DIMS", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
    // ParseResizeBilinear / ParseResizeNearestNeighbor; resize_bilinear.cc,
    // resize_nearest_neighbor.cc Prepare: input, size, output.
    {"RESIZE_BILINEAR", {2, 1}, {2, 1}, "TfLiteResizeBilinearParams", 0, 0, nullptr, "i0 i1 o0"},
    {"RESIZE_NEAREST_NEIGHBOR", {2, 1}, {2, 1}, "TfLiteResizeNearestNeighborParams", 0, 0, nullptr, "i0 i1 o0"},
    // batch_to_space_nd.cc BatchToSpaceNDPrepare: input, output.
    {"BATCH_TO_SPACE_ND", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    // space_to_batch_nd.cc SpaceToBatchNDInit (SpaceToBatchParams), Prepare: input, output.
    {"SPACE_TO_BATCH_ND", {}, {}, nullptr, 4, 4, "SpaceToBatchParams", "i0 o0"},
    // ParseShape; shape.cc ShapePrepare takes no tensor.
    {"SHAPE", {1, 1}, {4, 4}, "TfLiteShapeParams", 0, 0, nullptr, ""},
    // fill.cc FillPrepare: dims, value, output.
    {"FILL", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
    // broadcast_args.cc BroadcastArgsPrepare: shape 1, shape 2, output; broadcast_to.cc
    // BroadcastToPrepare: input, shape, output.
    {"BROADCAST_ARGS", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
    {"BROADCAST_TO", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
    // reverse.cc ReverseV2Prepare: input, axis, output.
    {"REVERSE_V2", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
    // dynamic_update_slice.cc Prepare: operand, update, start indices, output.
    {"DYNAMIC_UPDATE_SLICE", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 i2 o0"},
    // ParseArgMax / ParseArgMin; arg_min_max.cc: Eval only.
    {"ARG_MAX", {1, 1}, {4, 4}, "TfLiteArgMaxParams", 0, 0, nullptr, ""},
    {"ARG_MIN", {1, 1}, {4, 4}, "TfLiteArgMinParams", 0, 0, nullptr, ""},
    // ParseMirrorPad; mirror_pad.cc MirrorPadInit (OpDataMirrorPad); the scratch is below.
    {"MIRROR_PAD", {1, 1}, {4, 4}, "TfLiteMirrorPaddingParams", 20, 20, "OpDataMirrorPad", "i0 i1 o0"},
    // ParseGather; gather.cc GatherPrepare: input, positions, output; the dims copy is below.
    {"GATHER", {8, 4}, {8, 4}, "TfLiteGatherParams", 0, 0, nullptr, "i0 i1 o0"},
    // gather_nd.cc GatherNdPrepare: params, indices, output; the dims copy is below.
    {"GATHER_ND", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
    // ParseDepthToSpace / ParseSpaceToDepth; depth_to_space.cc, space_to_depth.cc: input,
    // output; the dims copy is below.
    {"DEPTH_TO_SPACE", {4, 4}, {4, 4}, "TfLiteDepthToSpaceParams", 0, 0, nullptr, "i0 o0"},
    {"SPACE_TO_DEPTH", {4, 4}, {4, 4}, "TfLiteSpaceToDepthParams", 0, 0, nullptr, "i0 o0"},
    // ParsePool; l2_pool_2d.cc L2Prepare: output, input; the dims copy is below.
    {"L2_POOL_2D", {40, 4}, {40, 4}, "TfLitePoolParams", 0, 0, nullptr, "o0 i0"},
    // embedding_lookup.cc EmbeddingLookUpPrepare: lookup, value, output; the dims copy and
    // CalculateOpData's OpData (float scale + a pointer) are below.
    {"EMBEDDING_LOOKUP", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
};
// clang-format on

}  // namespace

bool shape_kernel(Kernel &k, bool &modelled, bool &scratch_ok)
{
    const std::string &n = k.op.op_name;
    scratch_ok = true;
    if (!apply_table(k, kRules, sizeof kRules / sizeof kRules[0])) return false;
    modelled = true;
    if (n == "MIRROR_PAD") {
        // mirror_pad.cc MirrorPadPrepare: two scratch buffers of input rank x int.
        const Tensor *in = k.input(0);
        scratch_ok = modelled = in != nullptr;
        if (!in) return true;
        const int64_t rank = static_cast<int64_t>(in->shape.size());
        k.scratch(4 * rank, "MIRROR_PAD output dims elements (rank x int)");
        k.scratch(4 * rank, "MIRROR_PAD input dims elements (rank x int)");
    } else if (n == "GATHER" || n == "GATHER_ND" || n == "DEPTH_TO_SPACE" || n == "SPACE_TO_DEPTH" ||
               n == "L2_POOL_2D" || n == "EMBEDDING_LOOKUP") {
        // CreateWritableTensorDimsWithCopy of the output: gather.cc, gather_nd.cc,
        // depth_to_space.cc, space_to_depth.cc, l2_pool_2d.cc, embedding_lookup.cc Prepare.
        dims_copy(k, k.output(0));
        if (n == "EMBEDDING_LOOKUP") k.persistent(k.ilp32 ? 8 : 16, "embedding_lookup OpData");
    }
    return true;
}

}  // namespace arenascope::planner::rules
