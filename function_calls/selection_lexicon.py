"""The words people use for the same request in English and Chinese, by concept: the
bridge tool selection crosses between a message and a tool described in the other
language (see `selection_words`). A word belongs to a concept when people use it to
ask for what tools of that concept do; a word may belong to several.

English words are listed as written ("reminders" and "reminding" meet "remind" by
stemming; an entry of several words matches those words in a row); Chinese words are
matched anywhere in a message, longest first.

WEAK concepts alone never make a tool relevant: they are words nearly every request
has ("show", "what", "today"), which only help to rank tools something else matched.
"""

from __future__ import annotations


def word_set(text: str) -> frozenset[str]:
    """The words of `text`, split on white space."""
    return frozenset(text.split())


# What a file name ends with: a word ending so ("notes/minutes.md") names a file, and
# the words of the name say nothing about the tool wanted.
FILE_EXTENSIONS: tuple[str, ...] = (
    "txt", "md", "png", "pdf", "docx", "doc", "jpg", "jpeg", "gif", "webp", "csv", "xlsx",
    "xls", "pptx", "ppt", "zip", "json", "yaml", "yml", "mp3", "mp4", "wav",
)  # fmt: skip

LEXICON: dict[str, tuple[str, ...]] = {
    # --- what is asked of a thing ----------------------------------------------------
    "list": (
        "list", "show", "which", "all", "display", "view", "列出", "列表", "哪些", "有什么",
        "看看", "查看", "显示", "所有", "都有", "有哪", "看一下", "瞧瞧", "还有啥",
    ),
    "delete": (
        "delete", "cancel", "remove", "drop", "kill", "nevermind", "scrap", "ditch",
        "取消", "删除", "删掉", "去掉", "不用了", "撤销", "移除", "停掉", "划掉", "作废", "删",
        "忘掉",
    ),
    "change": (
        "change", "move", "reschedule", "update", "edit", "modify", "shift", "rename",
        "instead", "adjust", "switch", "改", "修改", "改成", "换成", "调整", "挪到", "推迟到",
        "提前到", "更新", "改到", "换到", "移到", "移动到",
    ),
    "write": (
        "write", "save", "create", "new", "add", "make", "put", "insert", "record", "log",
        "note", "写", "保存", "创建", "新建", "添加", "新增", "加上", "记一下", "记录", "记上",
        "录入", "登记", "建个", "建一个", "加个", "加一个",
    ),
    "read": (
        "read", "open", "content", "cat", "contents", "pull up", "读", "读取", "打开", "内容",
        "看下",
    ),
    "when": (
        "today", "tomorrow", "tonight", "yesterday", "morning", "afternoon", "evening",
        "night", "week", "weekend", "month", "year", "now", "soon", "今天", "明天", "昨天",
        "今晚", "明早", "上午", "下午", "晚上", "早上", "中午", "这周", "下周", "上周", "周末",
        "本月", "这个月", "今年", "现在",
    ),
    # --- reminders -------------------------------------------------------------------
    "remind": (
        "remind", "reminder", "alarm", "alert", "ping", "nudge", "notify",
        "提醒", "闹钟", "叫我", "记得", "别忘", "别让我忘", "喊我", "通知我", "催", "定时",
        "叫一下", "提个醒", "叫醒",
    ),
    # A moment or a wait: what setting a reminder (or putting one off) is about.
    "at": (
        "min", "mins", "minute", "minutes", "hour", "hours", "hr", "hrs", "pm", "am",
        "noon", "midnight", "date", "分钟", "小时", "半小时", "一刻钟", "点半", "钟头",
        "分钟后", "小时后", "点钟",
    ),
    "repeat": (
        "every", "daily", "weekly", "monthly", "weekday", "weekdays", "recurring", "repeat",
        "每天", "每周", "每月", "每个", "工作日", "每晚", "每早", "每隔", "重复",
    ),
    "snooze": (
        "snooze", "later", "again", "postpone", "delay", "稍后", "再提醒", "晚点", "等会",
        "过会", "推迟", "延后", "再叫", "待会", "一会儿再", "过一小时", "过半小时", "再说",
    ),
    "pause": (
        "pause", "hold", "suspend", "skip", "mute", "暂停", "先停", "停一下", "搁置",
        "先别", "停一停", "别提醒",
    ),
    "resume": (
        "resume", "unpause", "restart", "continue", "reactivate", "back", "恢复", "继续",
        "重新开始", "重新启用", "接着",
    ),
    "history": (
        "history", "did", "fired", "sent", "went", "happened", "missed", "late", "failed",
        "记录", "历史", "发了吗", "响了", "提醒过", "有没有提醒", "发出来", "发出", "没收到",
        "没看到", "谁设", "设的",
    ),
    "rules": (
        "allow", "permission", "may", "rule", "restrict", "admin", "admins", "only",
        "权限", "谁能", "谁可以", "允许", "规则", "管理员", "只有", "随便",
    ),
    "everyone": ("everyone", "everybody", "team", "大家", "所有人", "全体", "全员"),
    # --- time and the chat's settings -------------------------------------------------
    "timezone": (
        "timezone", "zone", "tz", "utc", "gmt", "时区", "北京时间", "东京时间", "伦敦时间",
    ),
    "time": (
        "time", "clock", "oclock", "几点", "时间", "钟点", "时差", "那边是几点", "现在几点",
    ),
    "convert": (
        "convert", "conversion", "转换", "换算", "折合", "兑换", "等于", "是多少",
    ),
    "budget": (
        "budget", "token", "tokens", "usage", "quota", "limit", "burn", "额度", "用量",
        "消耗", "配额", "预算", "令牌", "token额度",
    ),
    "help": (
        "help", "command", "capability", "feature", "able", "what can you do",
        "what do you do", "帮助", "功能", "能做", "会什么",
        "怎么用", "命令", "能干", "会些啥", "会啥",
    ),
    # --- the chat itself --------------------------------------------------------------
    "summary": (
        "summary", "summarize", "summarise", "recap", "tldr", "digest", "overview", "gist",
        "points", "总结", "摘要", "汇总", "概括", "归纳", "梳理", "回顾", "讲了什么", "聊了什么",
        "说了什么", "聊了啥", "说了啥", "讲了啥", "要点", "整理", "纪要",
    ),
    # Something somebody said here: what searching the chat's own messages is for.
    "said": (
        "said", "say", "mention", "mentioned", "discuss", "discussed", "talk", "posted",
        "说过", "提到", "聊过", "讨论", "发过", "谁说", "说的", "讲过", "发的",
    ),
    "past": (
        "earlier", "ago", "before", "last", "previous", "chat", "conversation", "message",
        "之前", "上次", "刚才", "以前", "群里", "聊天", "消息", "来着",
    ),
    "catchup": (
        "miss", "catch", "catchup", "catch up", "behind", "away", "vacation", "错过", "漏了",
        "没看",
        "补课", "回来了", "跟上", "有人找我", "找我", "回来",
    ),
    # --- the web ----------------------------------------------------------------------
    "link": (
        "link", "url", "page", "article", "site", "website", "http", "https", "www",
        "链接", "网页", "文章", "网站", "网址", "这篇",
    ),
    "fetch": ("fetch", "download", "grab", "retrieve", "抓取", "下载", "获取"),
    "search": (
        "search", "google", "look", "lookup", "look up", "find", "搜索", "搜一下", "搜搜",
        "查一下", "查查", "查找", "找找", "百度", "找下", "找一下", "搜",
    ),
    "web": ("web", "internet", "online", "网上", "网络", "上网"),
    # What is happening now in the world: what only a web search knows.
    "news": (
        "news", "latest", "current", "recent", "headline", "headlines", "who won",
        "result", "results", "新闻", "最新", "最近", "热搜", "头条", "谁赢了", "比分",
    ),
    # --- developers' servers ------------------------------------------------------------
    "git": (
        "git", "commit", "commits", "branch", "repo", "repository", "diff", "stage", "staged",
        "unstage", "checkout", "merge", "head", "分支", "仓库", "代码库", "暂存", "暂存区",
        "差异", "代码", "提交记录", "代码提交", "哪些提交", "的提交",
    ),
    "file": (
        "file", "files", "folder", "directory", "dir", "path", "document", "drive",
        "shared folder", "shared drive", "文件", "目录", "文件夹", "路径", "文档", "合同",
        "附件", "共享盘", *FILE_EXTENSIONS,
    ),
    "image": (
        "image", "images", "photo", "photos", "picture", "pictures", "media", "png", "jpg",
        "jpeg", "gif", "webp", "图片", "照片", "截图", "相片",
    ),
    "size": ("size", "sizes", "biggest", "largest", "smallest", "大小", "最大", "多大", "占空间"),
    "memory": (
        "remember", "memory", "memorize", "fact", "know", "knowledge", "entity", "about",
        "relation", "graph", "notes", "记住", "记下", "备忘", "知识", "实体", "关系", "记忆",
        "记得吗", "你记得", "记着", "记一下", "记上",
    ),
    "database": (
        "database", "sql", "sqlite", "query", "table", "select", "schema", "db", "row",
        "column", "数据库", "表里", "查询", "数据表",
    ),
    "insight": ("insight", "memo", "finding", "洞察", "发现", "结论"),
    "forget": ("forget", "erase", "wipe", "purge", "忘掉", "忘记", "清除", "清空", "所有信息"),
    # --- home -------------------------------------------------------------------------
    "weather": (
        "weather", "rain", "forecast", "temperature", "sunny", "umbrella", "snow", "wind",
        "cold", "hot", "warm", "jacket", "coat", "天气", "下雨", "预报", "气温", "温度",
        "雨伞", "下雪", "刮风", "冷", "热", "外套", "天汽", "带伞", "穿",
    ),
    "air": ("air", "aqi", "pm2", "pollen", "smog", "空气", "雾霾", "花粉", "空气质量"),
    "sun": ("sunrise", "sunset", "daylight", "dawn", "dusk", "日出", "日落", "天亮", "天黑"),
    "light": (
        "light", "lights", "lamp", "bulb", "dim", "bright", "colour", "color", "灯",
        "灯光", "开灯", "关灯", "台灯", "调暗", "调亮",
    ),
    "heating": (
        "thermostat", "heating", "cooling", "aircon", "ac", "degrees", "空调", "暖气",
        "地暖", "制冷", "制热",
    ),
    "home": (
        "home", "house", "device", "devices", "door", "window", "garage", "plug",
        "家里", "车库", "插座", "家电", "设备", "窗户",
    ),
    "lock": ("lock", "unlock", "locked", "门锁", "锁门", "上锁", "开锁", "锁"),
    "vacuum": ("vacuum", "robot", "hoover", "clean", "扫地", "扫地机", "吸尘", "拖地"),
    "scene": (
        "scene", "mode", "movie", "away", "goodnight", "模式", "场景", "离家", "回家",
        "睡眠模式", "观影",
    ),
    "camera": ("camera", "snapshot", "cctv", "baby", "摄像头", "监控", "拍一张", "宝宝房"),
    "garden": (
        "garden", "water", "irrigation", "plants", "flowers", "浇水", "浇", "花园", "阳台的花",
    ),
    "energy": (
        "electricity", "gas", "power", "energy", "utility", "utilities", "电费", "燃气",
        "燃气费", "水费", "用电", "能耗",
    ),
    # --- travel -----------------------------------------------------------------------
    "flight": (
        "flight", "plane", "fly", "airport", "gate", "landing", "airline", "航班", "飞机",
        "飞", "机场", "接机", "登机", "机票", "延误", "落地",
    ),
    "hotel": ("hotel", "rental", "airbnb", "stay", "酒店", "宾馆", "民宿", "住几晚", "入住"),
    "train": ("train", "rail", "station", "platform", "火车", "高铁", "动车", "车次", "车站"),
    "visa": ("visa", "passport", "entry", "签证", "护照", "入境"),
    "trip": (
        "trip", "travel", "itinerary", "journey", "holiday", "tour", "行程", "旅行", "旅游",
        "之行", "出行", "安排",
    ),
    "packing": ("packing", "pack", "luggage", "suitcase", "行李", "打包", "带什么"),
    "book": ("book", "booking", "reserve", "reservation", "订", "预订", "预定", "预约", "订票"),
    # --- food -------------------------------------------------------------------------
    "recipe": (
        "recipe", "cook", "cooking", "dish", "bake", "ingredient", "ingredients",
        "菜谱", "做法", "食谱", "怎么做", "做饭", "烹饪", "方子", "配方", "用量",
    ),
    "serving": ("serving", "servings", "portion", "scale", "people", "人份", "份量", "几人"),
    "meal": (
        "meal", "dinner", "lunch", "breakfast", "menu", "eat", "晚饭", "午饭", "早饭",
        "吃", "菜单",
    ),
    "shopping": (
        "shopping", "grocery", "groceries", "buy", "bought", "supermarket", "买",
        "购物", "超市", "买菜", "清单", "要买",
    ),
    "nutrition": (
        "calorie", "calories", "kcal", "protein", "carbs", "fat", "nutrition", "卡路里",
        "热量", "蛋白质", "营养",
    ),
    "timer": ("timer", "countdown", "计时器", "倒计时", "计时"),
    "unit": (
        "cup", "cups", "gram", "grams", "ounce", "oz", "ml", "fahrenheit", "celsius",
        "华氏", "摄氏", "毫升", "盎司",
    ),
    # --- fitness ----------------------------------------------------------------------
    "workout": (
        "workout", "run", "ran", "running", "gym", "exercise", "swim", "swam", "cycling",
        "train", "健身", "跑步", "运动", "锻炼", "游泳", "骑车", "练", "腹肌", "器械",
    ),
    "steps": ("steps", "step", "walked", "tracker", "步数", "走了", "多少步"),
    "sleep": ("sleep", "slept", "nap", "睡眠", "睡了", "睡得"),
    "weight": ("weight", "weigh", "weighed", "kg", "scale", "体重", "称重", "公斤", "斤"),
    "drink": ("water", "drank", "drink", "hydration", "glass", "喝水", "喝了", "一杯水"),
    "stats": ("stats", "streak", "leaderboard", "most", "ranking", "统计", "排行", "几次", "最多"),
    # --- money ------------------------------------------------------------------------
    "money": (
        "money", "cost", "costs", "price", "pay", "paid", "spent", "spend", "amount",
        "钱", "花了", "付", "价格", "费用", "多少钱", "花多少",
    ),
    "expense": (
        "expense", "expenses", "split", "owe", "owes", "settle", "reimburse", "账",
        "算账", "分摊", "平摊", "均摊", "欠", "报销", "aa", "我付了", "垫付", "我请",
    ),
    "currency": (
        "currency", "exchange", "rate", "dollar", "dollars", "euro", "euros", "yen",
        "yuan", "rmb", "usd", "eur", "hkd", "汇率", "美元", "欧元", "日元", "人民币", "港币",
    ),
    "stock": ("stock", "share", "shares", "etf", "ticker", "market", "股票", "股价", "基金"),
    "bill": ("bill", "bills", "rent", "due", "insurance", "账单", "房租", "缴费", "到期"),
    "subscription": (
        "subscription", "subscriptions", "netflix", "spotify", "recurring", "订阅", "会员", "包月",
    ),
    "loan": ("loan", "mortgage", "interest", "repayment", "贷款", "房贷", "利率", "月供"),
    "saving": ("saving", "savings", "fund", "goal", "save", "存", "存钱", "储蓄", "攒"),
    "salary": ("salary", "payslip", "payroll", "wage", "pay", "工资", "薪资", "工资条", "薪水"),
    # --- household --------------------------------------------------------------------
    "chore": (
        "chore", "chores", "dishes", "cleaning", "rota", "turn", "家务", "洗碗", "打扫",
        "轮到", "值日",
    ),
    "bin": ("bin", "bins", "trash", "garbage", "recycling", "rubbish", "垃圾", "垃圾桶", "回收"),
    "pet": ("pet", "dog", "cat", "fed", "feed", "宠物", "狗", "猫", "喂", "狗狗", "猫咪"),
    "cinema": ("movie", "film", "cinema", "showtime", "showtimes", "电影", "影院", "场次", "有场"),
    # --- the office -------------------------------------------------------------------
    "leave": (
        "leave", "vacation", "holiday", "sick", "pto", "dayoff", "请假", "休假", "年假",
        "病假", "调休", "事假",
    ),
    "overtime": ("overtime", "加班", "加班费"),
    "business_trip": ("business", "trip", "出差", "差旅"),
    "meeting": (
        "meeting", "room", "conference", "standup", "sync", "calendar", "event",
        "appointment", "schedule", "会议", "开会", "会议室", "日程", "日历", "约会议", "例会",
    ),
    "invite": ("invite", "invitation", "邀请", "拉上", "叫上", "约上"),
    "free": (
        "free", "busy", "available", "availability", "空闲", "有空", "忙不忙", "忙", "没空",
        "共同", "都有空",
    ),
    "attendance": (
        "attendance", "checkin", "punch", "clock", "考勤", "打卡", "签到", "迟到", "补卡",
        "缺卡",
    ),
    "ticket": (
        "ticket", "issue", "bug", "incident", "support", "helpdesk", "broken", "laptop",
        "it", "access", "工单", "报修", "故障", "问题单", "运维", "坏了", "电脑", "单子",
        "提个单", "连不上", "登不上", "打不开",
    ),
    "parcel": (
        "package", "parcel", "delivery", "shipping", "tracking", "courier", "express",
        "快递", "包裹", "物流", "单号", "顺丰", "寄", "到哪了",
    ),
    "translate": (
        "translate", "translation", "english", "chinese", "japanese", "korean",
        "翻译", "英文", "中文", "日文", "英语", "译", "韩文",
    ),
    "vote": (
        "vote", "poll", "survey", "option", "ballot", "投票", "表决", "问卷", "投", "选项",
    ),
    "duty": (
        "duty", "oncall", "on call", "on duty", "shift", "rota", "roster", "值班", "轮班",
        "排班", "换班",
        "值日", "轮值", "换个班", "调班",
    ),
    "approve": (
        "approve", "approval", "reject", "sign", "review", "pending", "审批", "批准", "签字",
        "审核", "同意", "驳回", "待审",
    ),
    "contact": (
        "contact", "phone", "email", "address", "colleague", "extension", "directory",
        "通讯录", "电话", "邮箱", "联系", "同事", "分机", "手机号",
    ),
    "announce": (
        "announce", "announcement", "notice", "broadcast", "pin", "公告", "通知", "广播",
        "置顶", "发个公告",
    ),
    "task": (
        "task", "todo", "assign", "deadline", "progress", "overdue", "任务", "待办", "分配",
        "截止", "进度", "逾期",
    ),
    "printer": ("print", "printer", "copies", "打印", "打印机", "复印"),
    "car": (
        "car", "parking", "drive", "taxi", "ride", "driver", "停车", "车位", "打车", "用车",
        "司机",
    ),
    "supplies": (
        "supplies", "stationery", "charger", "keyboard", "mouse", "monitor", "equipment",
        "办公用品", "文具", "充电器", "键盘", "鼠标", "显示器", "申领",
    ),
    "visitor": ("visitor", "guest", "reception", "访客", "来访", "前台", "客人"),
    "wifi": ("wifi", "password", "network", "密码", "无线", "网络"),
    "report": ("report", "weekly", "周报", "日报", "汇报"),
    "wiki": (
        "wiki", "policy", "handbook", "guide", "vpn", "onboarding", "知识库", "制度", "指南",
        "手册",
    ),
    "birthday": ("birthday", "birthdays", "anniversary", "生日", "周年", "过生日"),
    "draw": (
        "raffle", "random", "draw", "lottery", "winner", "winners", "抽奖", "抽人", "随机",
        "抽",
    ),
    "canteen": ("canteen", "cafeteria", "食堂", "工作餐", "加班餐", "订餐"),
    "holiday_schedule": ("holidays", "public", "statutory", "节假日", "放假", "补班", "法定"),
}  # fmt: skip

# Concepts too common to tell tools apart on their own.
WEAK: frozenset[str] = frozenset(
    {"list", "write", "read", "change", "past", "when", "everyone", "money", "book", "home", "at"}
)

# How a short follow-up that names nothing of its own starts or ends ("and in Paris?",
# "那周末呢"): it asks the previous request again, so the chat's last lines choose.
FOLLOW_UP_STARTS: tuple[str, ...] = (
    "and ", "also ", "what about", "how about", "same for", "now for", "那", "还有", "再",
    "也", "那么",
)  # fmt: skip
FOLLOW_UP_ENDS: tuple[str, ...] = ("呢", "吧")

# English words that say nothing about which tool is wanted.
STOP_WORDS: frozenset[str] = word_set(
    "a an the to of in on at for and or but is are was were be been it its this that "
    "these those me my we our us you your i he she they them his her their do does "
    "please pls can could would will shall should with from by as into about up down "
    "out so if then than too very just also not no yes ok okay hey hi hello groupmate "
    "bot there here one some any thing things get got have has had am what whats how "
    "when where why who whom whose s t d ll re ve m going doing done thanks thank "
    "cool great good nice lol haha yeah yep sure really actually like want need let "
    "lets tell give think much many more "
)

# Chinese two-character pieces that say nothing about the tool wanted (function words,
# pronouns, politeness): left out of the pieces, never out of the concepts.
CHINESE_STOP: frozenset[str] = word_set(
    "一下 帮我 帮忙 什么 多少 怎么 这个 那个 我们 你们 他们 她们 可以 "
    "一个 没有 是不 不是 有没 一起 给我 我的 你的 是什 么时 时候 现在 "
    "知道 一些 还是 还有 就是 已经 然后 因为 所以 如果 的话 吗我 了吗 "
    "好的 谢谢 请问 麻烦 一点 有点 能不 不能 要不 怎么样 咋样 吧我 了我 "
    "了一 下吧 一次 大概 "
)
