"""`delivery_retry`: send a failed delivery of this chat's again, now (the dashboard's
"Retry"). For admins, the API and the dashboard; never offered to the model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminders import refused
from groupmate.function_calls.registry import tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import ReminderService, StorageError
from groupmate.storage.overview import NotRetryableError


class DeliveryRetryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    delivery_id: int = Field(ge=1, description="the failed delivery's id")


@tool_function(
    name="delivery_retry",
    admin_only=True,
    for_model=False,
    description="Send a failed reminder delivery of this chat again, now.",
)
async def delivery_retry(
    ctx: MessageContext,
    args: DeliveryRetryArgs,
    service: ReminderService,
) -> FunctionResult:
    try:
        outcome = await service.deliveries_admin.retry_delivery(args.delivery_id, ctx.chat_id)
    except NotRetryableError as exc:
        if exc.elsewhere:
            return FunctionResult.refused(
                "This process does not deliver to this chat's platform: send it again "
                "from the groupmate process that serves it.",
                "conflict",
            )
        return FunctionResult.refused(
            "Only a failed delivery of a reminder that still exists can be sent again.",
            "conflict",
        )
    except StorageError as exc:
        return refused(exc, ctx.text)
    return FunctionResult.direct(
        f"Delivery {args.delivery_id}: {outcome}.", data={"outcome": outcome}, value=outcome
    )
