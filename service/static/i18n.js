// Interface text in English and Chinese. Quote summaries come from the API in the language asked for.

const MESSAGES = {
  en: {
    title: "GPU rental quote explorer",
    api_docs: "API docs",
    intro: "Describe the job; every offer is priced at each card count and ranked.",
    job: "Job",
    gpu_hours: "GPU-hours on one reference card",
    reference_gpu: "Reference GPU",
    any_gpu: "— none —",
    model_params_b: "Model size (billion parameters)",
    speed_ratios: "Measured speed against the reference GPU",
    speed_ratios_hint: "GPU=ratio, comma-separated; replaces the catalog's estimated range for that GPU.",
    model: "Model (a name from the model list)",
    precision: "Precision of the weights",
    precision_none: "— the task's usual —",
    regions: "Regions (comma-separated; empty: all)",
    cities: "Cities (comma-separated; empty: all)",
    pricing: "Billing (none selected: all)",
    limit: "Quotes to show",
    task: "Task",
    task_none: "— not given —",
    task_inference: "Inference",
    task_lora: "LoRA fine-tune",
    task_qlora: "QLoRA fine-tune",
    task_full_finetune: "Full fine-tune",
    task_pretrain: "Pre-training",
    choices: "Cards and offers",
    card_counts: "Card counts (comma-separated; empty: every count offered)",
    gpus: "GPUs (none selected: all)",
    vendors: "Vendors (none selected: all)",
    limits: "Limits and ranking",
    deadline_hours: "Deadline (hours)",
    budget_cny: "Budget (CNY)",
    rank_by: "Rank by",
    rank_cost: "Lowest cost",
    rank_time: "Shortest time",
    rank_value: "Cost plus the value of waiting",
    time_value: "Value of an hour of waiting (CNY)",
    lang: "Language",
    submit: "Get quotes",
    loading: "Pricing…",
    done: "{n} quotes",
    no_quotes: "No offer fits this job. See what was excluded below.",
    request_failed: "The service did not answer: {reason}",
    plot_caption: "Cost against time; the line joins the Pareto frontier (no option is both cheaper and faster).",
    legend_frontier: "Pareto frontier",
    legend_stale: "stale price",
    cheapest: "cheapest",
    fastest: "fastest",
    recommended: "recommended",
    stale: "stale",
    axis_hours: "Hours (expected)",
    axis_cost: "Cost, CNY (expected)",
    col_rank: "#",
    col_offer: "Offer",
    col_gpu: "GPU",
    col_cards: "Cards",
    col_pricing: "Billing",
    col_hours: "Hours",
    col_cost: "Cost",
    col_card_hour: "Per card-hour",
    col_fetched: "Price fetched",
    col_notes: "Notes",
    nodes: "{n} nodes",
    range: "range {low} – {high}",
    billed: "billed {hours} h at {rate}/h",
    pricing_card_hour: "per card-hour",
    pricing_node_hour: "per node-hour",
    pricing_bundle: "bundle",
    pricing_term: "term rental",
    pricing_mixed: "mixed billing",
    illustrative: "illustrative",
    illustrative_title: "An illustrative reference price from a public article, not a live quote",
    illustrative_note: "Rows marked illustrative are reference prices taken from public articles, not live quotes from a vendor.",
    err_number: "{name} must be a number.",
    err_whole: "{name} must be a whole number.",
    err_text: "{name} must be text.",
    err_list: "{name} must be a list.",
    err_object: "{name} must be a list of name=value pairs.",
    err_yes_no: "{name} must be true or false.",
    err_min: "{name} must be at least {value}.",
    err_above: "{name} must be more than {value}.",
    err_max: "{name} must be at most {value}.",
    err_below: "{name} must be less than {value}.",
    err_items_min: "{name} needs more entries: at least {value}.",
    err_items_max: "{name} has too many entries: at most {value}.",
    err_chars_min: "{name} is too short: at least {value} characters.",
    err_chars_max: "{name} is too long: at most {value} characters.",
    err_pattern: "{name} is not written in the expected form.",
    err_required: "{name} is required.",
    err_choice: "“{value}” is not one of the choices for {name}.",
    err_unknown_field: "The service does not know the field “{value}”.",
    err_malformed: "The request was not readable JSON.",
    each_of: "every entry of {name}",
    ago_minutes: "{n} min ago",
    ago_hours: "{n} h ago",
    ago_days: "{n} days ago",
    just_now: "just now",
    vendor_fetched: "last fetched {when}",
    vendor_oldest_price: "oldest price observed {age}",
    vendor_stale: "prices stale",
    snapshot: "Price snapshot v{version}; oldest price fetched {when}.",
    excluded: "Left out: {items}.",
    excluded_memory: "{n} too little GPU memory",
    excluded_deadline: "{n} miss the deadline",
    excluded_budget: "{n} over budget",
    excluded_stale: "{n} stale prices",
    excluded_capacity: "{n} not enough cards",
    excluded_filters: "{n} outside the filters",
    tip_offer: "Offer",
    tip_hours: "Time",
    tip_cost: "Cost",
    tip_fetched: "Price fetched",
    none_selected: "all",
  },
  zh: {
    title: "GPU 租用报价查询",
    api_docs: "API 文档",
    intro: "填写任务信息；系统按每种卡数为所有报价计费并排序。",
    job: "任务",
    gpu_hours: "单张参考卡所需 GPU 小时",
    reference_gpu: "参考 GPU",
    any_gpu: "— 不指定 —",
    model_params_b: "模型规模（十亿参数）",
    speed_ratios: "实测相对参考 GPU 的速度",
    speed_ratios_hint: "GPU=倍数，逗号分隔；替代目录中该 GPU 的估计区间。",
    model: "模型（模型列表中的名称）",
    precision: "权重精度",
    precision_none: "— 按任务常用 —",
    regions: "地区（逗号分隔；留空即全部）",
    cities: "城市（逗号分隔；留空即全部）",
    pricing: "计费方式（不选即全部）",
    limit: "显示报价数",
    task: "任务类型",
    task_none: "— 未指定 —",
    task_inference: "推理",
    task_lora: "LoRA 微调",
    task_qlora: "QLoRA 微调",
    task_full_finetune: "全参数微调",
    task_pretrain: "预训练",
    choices: "卡数与报价",
    card_counts: "卡数（逗号分隔；留空即所有可租卡数）",
    gpus: "GPU 型号（不选即全部）",
    vendors: "供应商（不选即全部）",
    limits: "限制与排序",
    deadline_hours: "截止时间（小时）",
    budget_cny: "预算（元）",
    rank_by: "排序方式",
    rank_cost: "费用最低",
    rank_time: "用时最短",
    rank_value: "费用加等待成本",
    time_value: "每等待一小时的成本（元）",
    lang: "语言",
    submit: "获取报价",
    loading: "计算中…",
    done: "共 {n} 个报价",
    no_quotes: "没有符合该任务的报价，排除原因见下方。",
    request_failed: "服务没有响应：{reason}",
    plot_caption: "费用与用时；折线连接帕累托前沿（没有其他方案同时更便宜且更快）。",
    legend_frontier: "帕累托前沿",
    legend_stale: "价格已过期",
    cheapest: "最便宜",
    fastest: "最快",
    recommended: "推荐",
    stale: "已过期",
    axis_hours: "预计用时（小时）",
    axis_cost: "预计费用（元）",
    col_rank: "#",
    col_offer: "报价",
    col_gpu: "GPU",
    col_cards: "卡数",
    col_pricing: "计费方式",
    col_hours: "用时",
    col_cost: "费用",
    col_card_hour: "每卡时",
    col_fetched: "价格采集时间",
    col_notes: "备注",
    nodes: "{n} 个节点",
    range: "区间 {low} – {high}",
    billed: "按 {hours} 小时计费，每小时 {rate}",
    pricing_card_hour: "按卡时",
    pricing_node_hour: "按节点时",
    pricing_bundle: "套餐",
    pricing_term: "包期租用",
    pricing_mixed: "混合计费",
    illustrative: "示意价格",
    illustrative_title: "取自公开文章的示意参考价，并非实时报价",
    illustrative_note: "标有“示意价格”的行是取自公开文章的参考价，并非供应商的实时报价。",
    err_number: "{name}须为数字。",
    err_whole: "{name}须为整数。",
    err_text: "{name}须为文本。",
    err_list: "{name}须为列表。",
    err_object: "{name}须为“名称=数值”的列表。",
    err_yes_no: "{name}须为是或否。",
    err_min: "{name}不能小于 {value}。",
    err_above: "{name}须大于 {value}。",
    err_max: "{name}不能大于 {value}。",
    err_below: "{name}须小于 {value}。",
    err_items_min: "{name}至少需要 {value} 项。",
    err_items_max: "{name}最多 {value} 项。",
    err_chars_min: "{name}至少需要 {value} 个字符。",
    err_chars_max: "{name}最多 {value} 个字符。",
    err_pattern: "{name}的格式不正确。",
    err_required: "请填写{name}。",
    err_choice: "“{value}”不是{name}的可选项。",
    err_unknown_field: "服务不认识字段“{value}”。",
    err_malformed: "请求不是可读的 JSON。",
    each_of: "{name}中的每一项",
    ago_minutes: "{n} 分钟前",
    ago_hours: "{n} 小时前",
    ago_days: "{n} 天前",
    just_now: "刚刚",
    vendor_fetched: "最近采集于 {when}",
    vendor_oldest_price: "最早的价格观测于 {age}",
    vendor_stale: "价格已过期",
    snapshot: "价格快照 v{version}；最早的价格采集于 {when}。",
    excluded: "已排除：{items}。",
    excluded_memory: "{n} 个显存不足",
    excluded_deadline: "{n} 个超出截止时间",
    excluded_budget: "{n} 个超出预算",
    excluded_stale: "{n} 个价格过期",
    excluded_capacity: "{n} 个卡数不足",
    excluded_filters: "{n} 个不符合筛选条件",
    tip_offer: "报价",
    tip_hours: "用时",
    tip_cost: "费用",
    tip_fetched: "价格采集",
    none_selected: "全部",
  },
};

/** The message for `key` in `lang`, with `{name}` placeholders filled from `values`. */
export function translate(lang, key, values = {}) {
  const table = MESSAGES[lang] || MESSAGES.en;
  const template = table[key] ?? MESSAGES.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
}

/** Rewrites every element marked `data-i18n` under `root`. */
export function applyLanguage(root, lang) {
  root.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const element of root.querySelectorAll("[data-i18n]")) {
    element.textContent = translate(lang, element.dataset.i18n);
  }
  root.title = `gpuquote · ${translate(lang, "title")}`;
}

/** The language to start in: `?lang=`, else the browser's preference. */
export function initialLanguage(location, navigatorLanguage) {
  const asked = new URLSearchParams(location.search).get("lang");
  if (asked === "en" || asked === "zh") return asked;
  return (navigatorLanguage || "").toLowerCase().startsWith("zh") ? "zh" : "en";
}

// msgspec's decode messages (after the service strips the "at `$.path`" part), and the message each
// becomes. `name` is what the person sees the field called; `value` is the bound or value quoted.
const TYPE_KEYS = { float: "err_number", int: "err_whole", str: "err_text", array: "err_list",
  object: "err_object", bool: "err_yes_no" };
const BOUND_KEYS = { ">=": "err_min", ">": "err_above", "<=": "err_max", "<": "err_below" };
const LENGTH_KEYS = { ">=": "_min", "<=": "_max" };
const WANTED_KEYS = { "a number": "err_number", "a whole number": "err_whole", text: "err_text", "a list": "err_list",
  "an object": "err_object", "true or false": "err_yes_no" };
const SYMBOLS = { "≥": ">=", ">": ">", "≤": "<=", "<": "<" };
const DECODER_PATTERNS = [
  [/^Expected `(\w+)(?: \| null)?`, got `\w+`$/, ([type]) => TYPE_KEYS[type] && [TYPE_KEYS[type], ""]],
  [/^Expected `(?:float|int)(?: \| null)?` (>=|>|<=|<) (-?[\d.e+]+)$/, ([op, bound]) => [BOUND_KEYS[op], bound]],
  [/^Expected `(array|object|str)(?: \| null)?` of length (>=|<=) (\d+)$/,
    ([type, op, bound]) => [(type === "str" ? "err_chars" : "err_items") + LENGTH_KEYS[op], bound]],
  [/^Expected `str(?: \| null)?` matching regex/, () => ["err_pattern", ""]],
  [/^Object missing required field `\w+`$/, () => ["err_required", ""]],
  [/^Invalid enum value '(.*)'$/, ([value]) => ["err_choice", value]],
  [/^Object contains unknown field `(.+)`$/, ([value]) => ["err_unknown_field", value]],
  [/^(?:JSON is malformed|Input data was truncated)/, () => ["err_malformed", ""]],
  // The same faults as the service words them for callers ("must be a number ≥ 0.001").
  [/^must be (a number|a whole number|text|a list|an object|true or false), got /,
    ([wanted]) => [WANTED_KEYS[wanted], ""]],
  [/^must be (?:a number|a whole number) (≥|>|≤|<) (-?[\d.e+]+)$/, ([op, bound]) => [BOUND_KEYS[SYMBOLS[op]], bound]],
  [/^must be (a list|an object|text) of (at least|at most) (\d+) /,
    ([wanted, amount, count]) => [(wanted === "text" ? "err_chars" : "err_items") + (amount === "at least" ? "_min" : "_max"), count]],
  [/^(?:each key must|must) match the pattern /, () => ["err_pattern", ""]],
  [/^must be one of .*; got '?([^']*)'?$/, ([value]) => ["err_choice", value]],
  [/^is required$/, () => ["err_required", ""]],
];

/** A number from a decoder message as a person writes it: "0.0" is 0, "10000000.0" is 10,000,000. */
function plainNumber(lang, text) {
  const value = Number(text);
  if (!Number.isFinite(value)) return text;
  return new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en-US", { maximumFractionDigits: 6 }).format(value);
}

/**
 * The API's `reason` for a field as a sentence in `lang`, naming the field `name`; a reason no pattern
 * knows (the engine's own, already written for people) comes back as sent.
 */
export function errorSentence(lang, reason, name) {
  for (const [pattern, toMessage] of DECODER_PATTERNS) {
    const match = pattern.exec(reason);
    const found = match && toMessage(match.slice(1));
    if (!found) continue;
    const [key, value] = found;
    const shown = key === "err_choice" || key === "err_unknown_field" ? value : plainNumber(lang, value);
    const sentence = translate(lang, key, { name, value: shown });
    return sentence.charAt(0).toUpperCase() + sentence.slice(1);
  }
  return reason;
}
