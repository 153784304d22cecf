"""office_pack：公司群用的办公插件（请假、会议室、报销、考勤、工单、快递、日历、投票、值班……）。

为工具选择语料而写：处理函数只回固定的文字，工具的声明和真实插件一样。
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groupmate import Example, FunctionResult, MessageContext, Plugin, tool_function

plugin = Plugin("office_pack", description="办公助手：请假、会议室、报销、考勤、工单等")


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


def ok(what: str) -> FunctionResult:
    return FunctionResult.direct(f"✅ {what}")


def found(**data: object) -> FunctionResult:
    return FunctionResult.for_model(data)


# --- 请假 / 加班 / 出差 -------------------------------------------------------------------


class LeaveArgs(Args):
    kind: Literal["年假", "事假", "病假", "调休", "婚假", "产假", "丧假"] = Field(
        description="假期类型"
    )
    start: str = Field(description="开始日期时间，如 2026-03-02 09:00")
    end: str = Field(description="结束日期时间")
    reason: str = Field("", description="请假事由")


@tool_function(
    description="提交请假申请（年假、事假、病假、调休等），提交后流转给直属主管审批。",
    examples=["明天下午请半天事假", "下周一到周三休年假"],
)
async def leave_apply(ctx: MessageContext, args: LeaveArgs) -> FunctionResult:
    return ok(f"{ctx.sender_name} 的{args.kind}申请已提交")


@tool_function(description="查询自己剩余的年假、调休天数和本年度已休假期。", effect="read")
async def leave_balance(ctx: MessageContext) -> FunctionResult:
    return found(年假剩余=6.5, 调休剩余=1)


class LeaveCancelArgs(Args):
    request_id: str | None = Field(None, description="请假单号，不填则为最近一张")


@tool_function(description="撤销或修改一张还没开始的请假单。")
async def leave_cancel(args: LeaveCancelArgs) -> FunctionResult:
    return ok("请假单已撤销")


class OvertimeArgs(Args):
    date: str = Field(description="加班日期")
    hours: float = Field(gt=0, le=16, description="加班时长（小时）")
    compensation: Literal["调休", "加班费"] = Field("调休", description="补偿方式")
    reason: str = ""


@tool_function(description="提交加班申请，可选择换调休或发加班费。")
async def overtime_apply(args: OvertimeArgs) -> FunctionResult:
    return ok(f"{args.date} 加班 {args.hours:g} 小时已申请")


class TripArgs(Args):
    city: str = Field(description="出差城市")
    start: str = Field(description="出发日期")
    end: str = Field(description="返回日期")
    purpose: str = Field(description="出差事由")
    budget: float | None = Field(None, description="预计费用（元）")


@tool_function(description="提交出差申请（目的地、日期、事由、预算），审批后可订票订酒店。")
async def business_trip_apply(args: TripArgs) -> FunctionResult:
    return ok(f"{args.city} 出差申请已提交")


# --- 会议室 --------------------------------------------------------------------------------


class RoomBookArgs(Args):
    room: str | None = Field(None, description="会议室名称，如 '长城厅'，不填则自动挑空闲的")
    start: str = Field(description="开始时间")
    minutes: int = Field(60, ge=15, le=480, description="时长（分钟）")
    people: int | None = Field(None, ge=1, description="参会人数")
    topic: str = Field("", description="会议主题")


@tool_function(
    name="meeting_room_book",
    description="预订会议室：指定时间、时长和人数，可指定房间。",
    examples=[
        Example("明天上午10点订个6人会议室", {"start": "明天 10:00", "people": 6}),
        "book 长城厅 for 2pm",
    ],
)
async def book_room(args: RoomBookArgs) -> FunctionResult:
    return ok("会议室已预订")


class RoomFreeArgs(Args):
    start: str = Field(description="从什么时候起")
    minutes: int = Field(60, description="需要多长时间")
    floor: str | None = Field(None, description="楼层或楼栋")


@tool_function(
    name="meeting_room_free",
    description="查询某个时段有哪些会议室空闲（含容量、投影/视频会议设备）。",
    effect="read",
)
async def free_rooms(args: RoomFreeArgs) -> FunctionResult:
    return found(空闲=["黄山厅(8人)", "泰山厅(12人)"])


class RoomCancelArgs(Args):
    booking: str = Field(description="预订编号或'明天10点长城厅'这样的描述")


@tool_function(name="meeting_room_cancel", description="取消已预订的会议室。")
async def cancel_room(args: RoomCancelArgs) -> FunctionResult:
    return ok("会议室预订已取消")


# --- 报销 ----------------------------------------------------------------------------------


class ClaimArgs(Args):
    amount: float = Field(gt=0, description="金额（元）")
    category: Literal["交通", "餐饮", "住宿", "办公用品", "招待", "其他"] = Field(
        description="费用类别"
    )
    note: str = Field("", description="说明")
    invoice: bool = Field(True, description="是否有发票")


@tool_function(
    description="提交费用报销单（打车、餐费、住宿等），附发票后进入财务审核。",
    examples=["报销昨天打车 86 块"],
)
async def reimbursement_submit(args: ClaimArgs) -> FunctionResult:
    return ok(f"报销 {args.amount:.2f} 元已提交")


class ClaimStatusArgs(Args):
    claim_id: str | None = Field(None, description="报销单号，不填则列出最近的")


@tool_function(description="查询报销单的审批进度和打款状态。", effect="read")
async def reimbursement_status(args: ClaimStatusArgs) -> FunctionResult:
    return found(状态="财务审核中")


# --- 考勤 ----------------------------------------------------------------------------------


class ClockArgs(Args):
    kind: Literal["上班", "下班"] = Field(description="上班卡还是下班卡")
    location: str | None = Field(None, description="外勤打卡时的地点")


@tool_function(description="考勤打卡（上班/下班），外勤可带地点。", command="daka")
async def attendance_clock(ctx: MessageContext, args: ClockArgs) -> FunctionResult:
    return ok(f"{ctx.sender_name} {args.kind}打卡成功")


class RecordArgs(Args):
    month: str | None = Field(None, description="月份，如 2026-02，默认本月")
    member: str | None = Field(None, description="查谁的，默认自己（主管可查下属）")


@tool_function(
    description="查看考勤记录：每天的打卡时间、迟到早退、缺卡次数。",
    effect="read",
)
async def attendance_record(args: RecordArgs) -> FunctionResult:
    return found(迟到=1, 缺卡=["2026-02-12 下班"])


class FixArgs(Args):
    date: str = Field(description="缺卡日期")
    kind: Literal["上班", "下班"] = Field(description="补哪次卡")
    reason: str = Field(description="原因，如忘记打卡、外出办事")


@tool_function(description="提交补卡申请（忘打卡、外出等原因）。")
async def attendance_fix(args: FixArgs) -> FunctionResult:
    return ok(f"{args.date} {args.kind}补卡已提交")


# --- 工单 ----------------------------------------------------------------------------------


class TicketArgs(Args):
    title: str = Field(description="问题简述")
    category: Literal["电脑", "网络", "账号权限", "软件安装", "行政", "其他"] = "其他"
    urgent: bool = False
    detail: str = ""


@tool_function(
    description="给 IT 或行政提交工单：电脑故障、网络、账号权限、软件安装、工位报修等。",
    examples=["工位的显示器不亮了，报个修"],
)
async def ticket_create(args: TicketArgs) -> FunctionResult:
    return ok("工单 #4521 已创建")


class TicketStatusArgs(Args):
    ticket_id: str | None = Field(None, description="工单号，不填则列出自己未关闭的")


@tool_function(description="查询工单的处理进度、处理人和回复。", effect="read")
async def ticket_status(args: TicketStatusArgs) -> FunctionResult:
    return found(状态="处理中", 处理人="小王")


class TicketCloseArgs(Args):
    ticket_id: str = Field(description="工单号")
    comment: str = Field("", description="补充说明或评价")


@tool_function(description="关闭工单或给工单追加说明（问题已解决、补充截图说明等）。")
async def ticket_update(args: TicketCloseArgs) -> FunctionResult:
    return ok(f"工单 {args.ticket_id} 已更新")


# --- 快递 ----------------------------------------------------------------------------------


class ExpressArgs(Args):
    number: str = Field(description="快递单号")
    company: str | None = Field(None, description="快递公司，如顺丰、中通，不填自动识别")


@tool_function(
    description="快递查询：按单号查物流轨迹和预计送达时间。",
    effect="external",
    examples=["查下快递 SF1402938475", "我的中通到哪了 75839201938"],
)
async def express_track(args: ExpressArgs) -> FunctionResult:
    return found(最新="【上海】派送中", 预计="今天")


class SendArgs(Args):
    to: str = Field(description="收件人、电话和地址")
    item: str = Field(description="寄什么")
    company: str = Field("顺丰", description="快递公司")


@tool_function(description="下单寄快递：行政前台统一叫快递员上门取件。")
async def express_send(args: SendArgs) -> FunctionResult:
    return ok("寄件已下单，快递员 15:00 前上门")


# --- 翻译 / 汇率 ---------------------------------------------------------------------------


class TranslateArgs(Args):
    text: str = Field(description="要翻译的文字")
    target: str = Field("英文", description="目标语言，如 英文、中文、日文")


@tool_function(
    description="翻译一段文字（中英日韩等），保留专业术语。",
    effect="external",
    examples=["把这句翻成英文：我们下周三前交付"],
)
async def translate(args: TranslateArgs) -> FunctionResult:
    return found(译文="...")


class RateArgs(Args):
    base: str = Field("USD", description="原币种，如 USD")
    quote: str = Field("CNY", description="目标币种，如 CNY")
    amount: float = Field(1, description="金额")


@tool_function(
    description="查询实时汇率，并按汇率换算金额（美元、欧元、日元、港币兑人民币等）。",
    effect="external",
)
async def exchange_rate(args: RateArgs) -> FunctionResult:
    return found(rate=7.18)


# --- 日历 ----------------------------------------------------------------------------------


class EventArgs(Args):
    title: str = Field(description="日程标题")
    start: str = Field(description="开始时间")
    minutes: int = Field(60, description="时长（分钟）")
    attendees: list[str] = Field(default_factory=list, description="邀请的同事")


@tool_function(
    description="在公司日历里创建日程并邀请同事（会发日历邀请，不预订会议室）。",
)
async def calendar_add(args: EventArgs) -> FunctionResult:
    return ok(f"日程「{args.title}」已创建")


class DayArgs(Args):
    date: str | None = Field(None, description="哪天，默认今天")
    member: str | None = Field(None, description="看谁的日程，默认自己")


@tool_function(description="查看某天的日程安排（自己或同事的忙闲）。", effect="read")
async def calendar_agenda(args: DayArgs) -> FunctionResult:
    return found(日程=["10:00 周会", "15:00 面试"])


class SlotArgs(Args):
    members: list[str] = Field(min_length=1, description="要约的同事")
    minutes: int = Field(30, description="需要多长")
    within: str = Field("本周", description="在什么范围内找，如 本周、明天")


@tool_function(
    description="找几位同事共同的空闲时间，方便约会议。",
    effect="read",
    examples=["帮我找下我和老李、Amy 这周都有空的半小时"],
)
async def find_common_time(args: SlotArgs) -> FunctionResult:
    return found(可选=["周三 14:00", "周四 10:30"])


@tool_function(
    description="查询法定节假日和调休上班安排（哪天放假、哪天补班）。",
    effect="read",
)
async def holiday_schedule() -> FunctionResult:
    return found(国庆="10月1日至7日放假，9月28日补班")


# --- 投票 ----------------------------------------------------------------------------------


class PollArgs(Args):
    question: str = Field(description="投票问题")
    options: list[str] = Field(min_length=2, description="选项")
    anonymous: bool = False
    multiple: bool = Field(False, description="是否可多选")


@tool_function(
    description="在群里发起投票（可匿名、可多选）。",
    examples=["发起投票：团建去哪，选项 爬山/密室/烧烤"],
)
async def poll_create(args: PollArgs) -> FunctionResult:
    return ok("投票已发起")


class VoteArgs(Args):
    poll: str | None = Field(None, description="投票编号，默认最近一个")
    choice: str = Field(description="选哪个")


@tool_function(description="给群里正在进行的投票投票。")
async def poll_vote(args: VoteArgs) -> FunctionResult:
    return ok(f"已投「{args.choice}」")


class PollResultArgs(Args):
    poll: str | None = Field(None, description="投票编号，默认最近一个")
    close: bool = Field(False, description="是否同时结束投票")


@tool_function(description="查看投票结果、谁还没投，或结束投票。", effect="read")
async def poll_result(args: PollResultArgs) -> FunctionResult:
    return found(爬山=5, 密室=3, 未投=["老张"])


# --- 值班 ----------------------------------------------------------------------------------


class DutyArgs(Args):
    date: str | None = Field(None, description="哪天，默认今天")
    team: str | None = Field(None, description="哪个组的值班")


@tool_function(description="查询值班表：某天谁值班、这周/下周的轮值安排。", effect="read")
async def duty_roster(args: DutyArgs) -> FunctionResult:
    return found(今天="小刘", 明天="阿杰")


class SwapArgs(Args):
    date: str = Field(description="要换的那天")
    with_member: str = Field(description="和谁换")


@tool_function(description="申请和同事换班（值班调换），对方确认后生效。")
async def duty_swap(args: SwapArgs) -> FunctionResult:
    return ok(f"已向 {args.with_member} 发起换班")


# --- 审批 / 待办 ---------------------------------------------------------------------------


@tool_function(
    description="列出等我审批的单子（请假、报销、采购、用印等）。",
    effect="read",
)
async def approvals_pending(ctx: MessageContext) -> FunctionResult:
    return found(待审批=["张三 年假2天", "李四 报销 320 元"])


class DecideArgs(Args):
    item: str = Field(description="审批单号或描述，如 '张三的年假'")
    decision: Literal["同意", "驳回"]
    comment: str = ""


@tool_function(description="处理一张审批单：同意或驳回，可附意见。")
async def approval_decide(args: DecideArgs) -> FunctionResult:
    return ok(f"已{args.decision}")


class TodoArgs(Args):
    task: str = Field(description="任务内容")
    assignee: str | None = Field(None, description="负责人，默认自己")
    due: str | None = Field(None, description="截止日期")


@tool_function(
    description="给自己或同事布置一项待办任务（带截止日期，会出现在对方的待办列表）。",
)
async def todo_assign(args: TodoArgs) -> FunctionResult:
    return ok("待办已创建")


class TodoListArgs(Args):
    member: str | None = Field(None, description="看谁的，默认自己")
    include_done: bool = False


@tool_function(description="查看待办列表：未完成、已逾期的任务。", effect="read")
async def todo_list(args: TodoListArgs) -> FunctionResult:
    return found(待办=["周五前交季度报告"])


# --- 行政 ----------------------------------------------------------------------------------


class ContactArgs(Args):
    name: str = Field(description="同事姓名、英文名或部门")


@tool_function(
    description="公司通讯录：查同事的手机、分机、邮箱、工位和部门。",
    effect="read",
    examples=["市场部的 Lily 分机多少"],
)
async def contact_lookup(args: ContactArgs) -> FunctionResult:
    return found(分机="8123", 工位="5F-A12")


class MealArgs(Args):
    meal: Literal["午餐", "晚餐"] = "午餐"
    dish: str | None = Field(None, description="想吃的套餐，不填则看今天的菜单")
    count: int = Field(1, ge=1, le=50, description="份数")


@tool_function(description="订公司食堂的工作餐或加班餐，或查看今天的菜单。")
async def canteen_order(args: MealArgs) -> FunctionResult:
    return found(菜单=["红烧肉套餐", "番茄鸡蛋面"])


class VisitorArgs(Args):
    name: str = Field(description="访客姓名")
    company: str = Field("", description="访客单位")
    arrive: str = Field(description="到访时间")


@tool_function(description="登记访客预约，前台凭登记发临时门禁卡。")
async def visitor_register(args: VisitorArgs) -> FunctionResult:
    return ok(f"访客 {args.name} 已登记")


class PrintArgs(Args):
    file: str = Field(description="文件名或链接")
    copies: int = Field(1, ge=1, le=200)
    printer: str | None = Field(None, description="打印机位置，如 3楼茶水间")
    color: bool = False


@tool_function(description="把文件发到办公室打印机打印（份数、彩色黑白、哪台打印机）。")
async def print_document(args: PrintArgs) -> FunctionResult:
    return ok(f"{args.file} 已发送到打印机")


@tool_function(description="获取今天的访客 Wi-Fi 名称和密码（每天更换）。", effect="read")
async def guest_wifi() -> FunctionResult:
    return found(ssid="Company-Guest", password="spring2026")


class PayArgs(Args):
    month: str | None = Field(None, description="月份，默认上个月")


@tool_function(
    description="查询自己的工资条：应发、社保公积金、个税、实发（金额只私聊发给本人）。",
    effect="read",
)
async def payslip(args: PayArgs) -> FunctionResult:
    return found(实发="******")


class CarArgs(Args):
    start: str = Field(description="用车时间")
    destination: str = Field(description="去哪")
    passengers: int = Field(1, ge=1, le=7)


@tool_function(description="预约公务用车（司机接送客户、去机场等）。")
async def car_booking(args: CarArgs) -> FunctionResult:
    return ok("用车已预约")


class SuppliesArgs(Args):
    items: list[str] = Field(min_length=1, description="要领的东西，如 笔记本、键盘、显示器")
    reason: str = ""


@tool_function(description="申领办公用品或设备（文具、键鼠、显示器、笔记本电脑等）。")
async def office_supplies_request(args: SuppliesArgs) -> FunctionResult:
    return ok("申领已提交行政")


class ReportArgs(Args):
    done: str = Field(description="本周完成")
    next: str = Field("", description="下周计划")
    risks: str = Field("", description="风险和需要的支持")


@tool_function(description="提交本周周报（完成事项、下周计划、风险）。")
async def weekly_report_submit(args: ReportArgs) -> FunctionResult:
    return ok("周报已提交")


class DocArgs(Args):
    query: str = Field(description="要找的内容，如 报销制度、VPN 配置")


@tool_function(
    description="搜索公司内部知识库和制度文档（报销制度、VPN 配置、入职指南等）。",
    effect="read",
    examples=["公司的差旅标准是多少"],
)
async def wiki_search(args: DocArgs) -> FunctionResult:
    return found(文档=["《差旅费管理办法》第三条"])


class NoticeArgs(Args):
    title: str
    body: str = Field(description="公告内容")
    pin: bool = Field(True, description="是否置顶")


@tool_function(description="在群里发布并置顶一条正式公告（仅管理员）。", admin_only=True)
async def announcement_post(args: NoticeArgs) -> FunctionResult:
    return ok(f"公告「{args.title}」已发布")


class BirthdayArgs(Args):
    month: int | None = Field(None, ge=1, le=12, description="月份，默认本月")


@tool_function(description="本月（或某月）过生日、入职周年的同事名单。", effect="read")
async def birthdays(args: BirthdayArgs) -> FunctionResult:
    return found(生日=["小周 3月8日"])


class ParkingArgs(Args):
    date: str = Field(description="哪天")
    plate: str | None = Field(None, description="车牌号")


@tool_function(description="预约公司停车位（访客车或临时车位）。")
async def parking_reserve(args: ParkingArgs) -> FunctionResult:
    return ok(f"{args.date} 车位已预约")


class DrawArgs(Args):
    among: list[str] = Field(default_factory=list, description="从谁里面抽，默认群里所有人")
    count: int = Field(1, ge=1, le=20, description="抽几个")
    prize: str = Field("", description="抽什么，如 '谁去拿外卖'")


@tool_function(
    description="随机抽人：年会抽奖、谁去拿外卖、谁先讲。",
    examples=["随机抽一个人去取外卖"],
)
async def lucky_draw(args: DrawArgs) -> FunctionResult:
    return ok("抽中：小李")
