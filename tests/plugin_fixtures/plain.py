"""A plugin exactly like the README's split_bill: one decorated handler, nothing else."""

from __future__ import annotations

from pydantic import BaseModel, Field

from groupmate import FunctionResult, MessageContext, tool_function


class SplitArgs(BaseModel):
    total: float = Field(gt=0, description="Amount on the bill")
    people: int = Field(ge=2, le=50, description="How many people share it")


@tool_function(description="Split a bill evenly", examples=["split 90 € between 4"])
async def split_bill(ctx: MessageContext, args: SplitArgs) -> FunctionResult:
    share = args.total / args.people
    return FunctionResult.direct(f"{ctx.sender_name}, that's {share:.2f} each.")
