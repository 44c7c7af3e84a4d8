"""The verdict kinds and the check rules: the one registry of what a post-mortem can conclude and
of what `arena check` (and every snapshot's `checks`) judges. Each Verdict's `kind`
(analyse/postmortem.Verdict) is one of these; the snapshot schema's enums
(docs/snapshot-schema.json: fault.verdicts[].kind, and tflm.verdicts[].kind for the post-mortem's
own) are checked against this table by tests/plugin/test_verdict_registry.py, and the viewer shows
any kind, known or not, by its headline."""

STACK_INTO_ARENA = "stack-into-arena"   # the stack (or an RTOS task's) ran past its limit into an arena
ALLOCATION_FAILED = "allocation-failed"  # AllocateTensors did not finish: the arena is too small
FAILURE_IGNORED = "failure-ignored"    # AllocateTensors failed and the application went on
TFLM_DAMAGED = "tflm-damaged"          # TFLM's objects overwritten, not by the stack
OVERRUN = "buffer-overrun"             # a free band's canary is broken: something wrote past its buffer
NOT_ARENA = "not-arena-nor-stack"      # the agent's bands and checksums are intact, the stack in bounds
NONE_OF_THESE = "none"                 # agentless: TFLM's objects sound, the stack above its limit
UNKNOWN = "unknown"                    # agentless: no bands or checksums to tell
TAIL_OVERWRITTEN = "tail-overwritten"  # immutable regions changed, the stack in bounds: a wild write
STACK_LIMIT = "stack-limit"            # ARMv8-M STKOF: the stack limit register stopped an overflow
TASK_OVERFLOW = "task-stack-overflow"  # an RTOS task's stack overflowed, into something other than an arena

# The post-mortem of TFLM's own objects (analyse/postmortem.py): the snapshot's tflm.verdicts.
POSTMORTEM = (STACK_INTO_ARENA, ALLOCATION_FAILED, FAILURE_IGNORED, TFLM_DAMAGED)
# Every kind, in the order the schema lists them (fault.verdicts).
KINDS = POSTMORTEM + (OVERRUN, NOT_ARENA, NONE_OF_THESE, UNKNOWN, TAIL_OVERWRITTEN, STACK_LIMIT, TASK_OVERFLOW)

# The check rules: each figures.Check's `rule` (the plugin's) and the planner's (planner/src/
# snapshot.cpp: prediction, plan, used), with what each judges. docs/snapshot-schema.md lists them
# (tests/plugin/test_verdict_registry.py holds the three in step).
RULES = {
    "descriptor": "the arenascope descriptor decodes (magic, ABI, CRC, bounds)",
    "arena": "an arena is published",
    "measured": "the agent has measured its bands",
    "consistent": "the descriptor was not read mid-update (odd seq)",
    "canary": "each arena's free band still holds its canary",
    "alignment": "each arena's base is aligned as TFLM needs",
    "bounds": "each arena lies in RAM, apart from the stack and the guard band",
    "plan": "no two regions with overlapping lifetimes share bytes",
    "used": "the used bytes fit the arena",
    "headroom": "the headroom over the peak is at least the margin",
    "guard": "the guard band between the arena and the stack is intact",
    "stack": "the room from the stack's high-water mark to the arena's end is at least 1.5 x the peak",
    "tflm": "TFLM's objects say AllocateTensors finished and hold TFLM's values (agentless)",
    "tasks": "the RTOS's task lists read whole",
    "task-stack": "each RTOS task's stack kept its fill above pxStack",
    "fault": "no fault of this boot (an exception, decoded by `arena fault`)",
    "prediction": "the planner models every kernel of the model (a prediction's snapshot)",
    "budget": "the room from the stack's top to the arena's end is at least 1.5 x the stack's worst case from the ELF "
              "(`arena check --budget`)",
}
