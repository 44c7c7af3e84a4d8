"""The verdict kinds: the one registry of what a post-mortem can conclude. Each Verdict's `kind`
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
