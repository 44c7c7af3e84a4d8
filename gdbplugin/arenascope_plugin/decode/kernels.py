"""Which TFLM kernels a firmware links, and the CPU its CMSIS-NN code is built for: what the
planner needs (`arenascope-plan --kernels cmsis-nn --cpu NAME`, docs/cmsis-nn.md) to predict the
arena the firmware's TFLM builds, read from the ELF without the user's help.

- Kernels: TFLM's cmsis_nn/*.cc kernels call CMSIS-NN's functions (arm_convolve_wrapper_s8,
  arm_fully_connected_s8, ...; ARM-software/CMSIS-NN Include/arm_nnfunctions.h); a firmware that
  links any of them runs CMSIS-NN's kernels, one that links none runs the reference kernels.
- CPU: the ELF's Arm build attributes (ARM IHI 0045, "Addenda to the ABI", 2.2): Tag_CPU_arch 6,
  Tag_DSP_extension 46, Tag_MVE_arch 48 and Tag_CPU_name 5 say which of CMSIS-NN's paths the
  compiler could take (MVE, DSP or plain C), which is all its buffer sizes depend on.
"""
from dataclasses import dataclass

from arenascope_plugin.remedy import Remedy

# CMSIS-NN functions TFLM's cmsis_nn kernels call in Prepare or Eval (linker names, C).
CMSIS_NN_FUNCTIONS = (
    "arm_convolve_wrapper_s8", "arm_convolve_wrapper_s16", "arm_convolve_wrapper_s4",
    "arm_convolve_wrapper_s8_get_buffer_size", "arm_depthwise_conv_wrapper_s8",
    "arm_depthwise_conv_wrapper_s16", "arm_depthwise_conv_wrapper_s8_get_buffer_size",
    "arm_fully_connected_s8", "arm_fully_connected_s16", "arm_fully_connected_s4",
    "arm_fully_connected_s8_get_buffer_size", "arm_avgpool_s8", "arm_avgpool_s16", "arm_max_pool_s8",
    "arm_max_pool_s16", "arm_softmax_s8", "arm_softmax_s16", "arm_softmax_s8_s16", "arm_svdf_s8",
    "arm_svdf_state_s16_s8", "arm_lstm_unidirectional_s8", "arm_lstm_unidirectional_s16",
    "arm_elementwise_add_s8", "arm_elementwise_add_s16", "arm_elementwise_mul_s8", "arm_elementwise_mul_s16",
)

TAG_CPU_NAME, TAG_CPU_ARCH, TAG_DSP_EXTENSION, TAG_MVE_ARCH = 5, 6, 46, 48
# Tag_CPU_arch values of the M profile (ABI addenda 2.3.4): 10 v7 (with profile M: Cortex-M3),
# 11 v6-M, 12 v6S-M, 13 v7E-M, 16 v8-M.baseline, 17 v8-M.mainline, 21 v8.1-M.mainline.
_ARCH = {10: ("v7-M", "cortex-m3"), 11: ("v6-M", "cortex-m0"), 12: ("v6S-M", "cortex-m0"),
         13: ("v7E-M", "cortex-m4"), 16: ("v8-M.baseline", "cortex-m23"), 17: ("v8-M.mainline", "cortex-m33"),
         21: ("v8.1-M.mainline", "cortex-m55")}
# Names the planner knows and the extensions gcc's -mcpu gives each (planner/src/kernels.cpp cpu_named).
_CPUS = {"cortex-m0": (False, False), "cortex-m0plus": (False, False), "cortex-m3": (False, False),
         "cortex-m23": (False, False), "cortex-m4": (True, False), "cortex-m7": (True, False),
         "cortex-m33": (True, False), "cortex-m55": (True, True), "cortex-m85": (True, True)}
KERNEL_SETS = ("reference", "cmsis-nn")


# gcc's -mcpu modifiers the planner takes (which core takes which, the planner checks: kernels.cpp).
CPU_MODIFIERS = ("nodsp", "nomve", "nofp", "nomve.fp", "nofp.dp")


def check_kernels(value: str) -> str | None:
    """Why `value` is not a kernels setting (auto, reference, cmsis-nn), or None."""
    return None if value in ("auto", *KERNEL_SETS) else f"{value!r}: use auto, reference or cmsis-nn"


def check_cpu(value: str) -> str | None:
    """Why `value` is not a CPU setting (auto, or a planner CPU name with gcc's modifiers), or None."""
    if value == "auto":
        return None
    base, *mods = value.split("+")
    name = base if base.startswith("cortex-") else f"cortex-{base}"
    if name not in _CPUS or any(m not in CPU_MODIFIERS for m in mods):
        return (f"{value!r}: use auto or one of {', '.join(_CPUS)}, optionally with "
                f"{' or '.join('+' + m for m in CPU_MODIFIERS[:2])} as gcc's -mcpu takes them")
    return None


def canonical_cpu(value: str) -> str:
    """A CPU setting with "cortex-" in front, as the planner names it ("m55+nomve" -> "cortex-m55+nomve")."""
    return value if value.startswith("cortex-") or value == "auto" else f"cortex-{value}"


@dataclass(frozen=True)
class KernelBuild:
    """kernels: "reference" or "cmsis-nn"; cpu: the planner's --cpu (None with reference);
    evidence: where each came from, in words for the user."""
    kernels: str
    cpu: str | None
    evidence: str

    def planner_args(self) -> list[str]:
        """The planner's options for this build."""
        return ["--kernels", self.kernels] + (["--cpu", self.cpu] if self.kernels == "cmsis-nn" and self.cpu else [])

    def describe(self) -> str:
        return "TFLM's reference kernels" if self.kernels == "reference" else f"TFLM's CMSIS-NN kernels for {self.cpu}"


def arch_from_attributes(attrs: dict) -> str | None:
    """The M-profile architecture ("v6-M", "v7E-M", "v8-M.baseline", ...) Tag_CPU_arch names, or None."""
    return _ARCH[attrs[TAG_CPU_ARCH]][0] if attrs.get(TAG_CPU_ARCH) in _ARCH else None


def cpu_from_attributes(attrs: dict) -> tuple[str | None, str]:
    """(the planner's --cpu, how it was read) from build attributes; (None, why) without them.
    The name is the CPU's when Tag_CPU_name names one the planner knows, else the
    architecture's representative (v7E-M -> cortex-m4, ...); +nodsp / +nomve when the attributes
    say the compiler had no DSP or MVE (a soft-float M55: no Tag_MVE_arch)."""
    arch = attrs.get(TAG_CPU_ARCH)
    named = str(attrs.get(TAG_CPU_NAME, "")).lower()
    if arch not in _ARCH and named not in _CPUS:
        said = f" (Tag_CPU_name \"{named}\")" if named else ""
        return None, f"the ELF's build attributes name no Cortex-M core{said}"
    arch_name, representative = _ARCH.get(arch, ("?", named)) if arch is not None else ("?", named)
    dsp = attrs.get(TAG_DSP_EXTENSION, 0) == 1 or arch == 13   # v7E-M implies the DSP extension
    mve = attrs.get(TAG_MVE_ARCH, 0) in (1, 2)
    base = named if named in _CPUS else representative
    if mve and not _CPUS[base][1]:
        base = "cortex-m55"
    can_dsp, can_mve = _CPUS[base]
    if dsp and not can_dsp:
        base = "cortex-m33" if arch == 17 else "cortex-m4"
        can_dsp, can_mve = _CPUS[base]
    cpu = base + ("+nodsp" if can_dsp and not dsp else "") + ("+nomve" if can_mve and not mve else "")
    said = ", ".join(["DSP" if dsp else "no DSP", "MVE" if mve else "no MVE"])
    return cpu, f"the ELF's build attributes (Tag_CPU_name \"{attrs.get(TAG_CPU_NAME, '')}\", {arch_name}, {said})"


def detect(symbols, kernels: str = "auto", cpu: str = "auto") -> KernelBuild:
    """The firmware's kernel build: each of kernels ("auto", "reference", "cmsis-nn") and cpu
    ("auto" or a planner CPU name) as the user set it, else read from the ELF (module doc). A
    CMSIS-NN build whose CPU cannot be read takes cortex-m4, the planner's default, and says so."""
    evidence = []
    if kernels == "auto":
        found = symbols.functions_present(CMSIS_NN_FUNCTIONS)
        kernels = "cmsis-nn" if found else "reference"
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        evidence.append(f"CMSIS-NN kernels: the ELF links {found[0]}{more}" if found
                        else "reference kernels: the ELF links none of CMSIS-NN's functions")
    else:
        linked = symbols.functions_present(CMSIS_NN_FUNCTIONS)
        against = ("; but the ELF links none of CMSIS-NN's functions" if kernels == "cmsis-nn" and not linked
                   else f"; but the ELF links {linked[0]}, a CMSIS-NN build" if kernels == "reference" and linked
                   else "")
        evidence.append(f"{kernels} kernels: {Remedy('kernels')}{against}")
    if kernels != "cmsis-nn":
        return KernelBuild(kernels, None, "; ".join(evidence))
    if cpu == "auto":
        attrs, why = symbols.build_attributes()
        read, how = cpu_from_attributes(attrs) if attrs else (None, why)
        if read is None:
            read, how = "cortex-m4", f"cortex-m4 assumed ({how}): {Remedy('cpu', 'NAME')}"
        cpu = read
        evidence.append(f"CPU {cpu}: {how}")
    else:
        cpu = canonical_cpu(cpu)
        evidence.append(f"CPU {cpu}: {Remedy('cpu')}")
    return KernelBuild(kernels, cpu, "; ".join(evidence))
