"""Places: Chinese names of cities and provinces, the region each city is in, and the city a vendor's
data-centre zone is in.

A feed that lists stock per zone (``card_hour_json``'s ``regions``, ``per_second_json``'s ``regions``)
names each zone its own way: ``苏州A区`` / ``suzhou-a``, ``南京B区`` / ``nanjing-b``, ``suzhou-1``. The stock
is where the zone is, not where the vendor's head office is, so each zone's offer takes the zone's city
(``zone_city``) and, when that city lies in another province, that province's region (``city_region``).

How a zone is placed, first match wins:

1. a Chinese city name inside any of its names (``南京B区`` → ``nanjing``; ``江苏南京一区`` → ``nanjing``:
   province names are not cities);
2. a Latin city id among the words of its names (``nanjing-b``, ``cn-wuxi-2`` → ``wuxi``), the vendor's
   own city counting as known even when this table lacks it;
3. otherwise (``zone-a``, ``az1``, two different cities in one name) the zone names no city: the offer keeps
   the vendor's configured city and is marked ``city_assumed``, which ``GET /vendors`` counts.

Region ids follow the vendors files: Jiangsu's cities are ``jiangsu``; Shenzhen is its own region
``shenzhen`` (the articles' two markets) and also counts as Guangdong; other cities take their province
(``hangzhou`` → ``zhejiang``), the four municipalities themselves (``shanghai``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["CITY_REGIONS", "PLACE_ALIASES", "PLACE_NAMES_ZH", "city_region", "zone_city"]

# City id → the regions it lies in, the region its offers get first. Ambiguous pinyin is left out
# (taizhou is 泰州 in Jiangsu and 台州 in Zhejiang), so such a zone keeps its vendor's city.
_JIANGSU_CITIES = (
    "suzhou", "nanjing", "wuxi", "changzhou", "nantong", "yangzhou", "zhenjiang", "xuzhou", "yancheng",
    "huaian", "lianyungang", "suqian", "kunshan",
)  # fmt: skip
CITY_REGIONS: Mapping[str, tuple[str, ...]] = {
    **dict.fromkeys(_JIANGSU_CITIES, ("jiangsu",)),
    "shenzhen": ("shenzhen", "guangdong"),
    **dict.fromkeys(
        ("guangzhou", "dongguan", "foshan", "zhuhai", "huizhou", "zhongshan", "shaoguan"), ("guangdong",)
    ),
    **{city: (city,) for city in ("shanghai", "beijing", "tianjin", "chongqing")},
    **dict.fromkeys(("hangzhou", "ningbo"), ("zhejiang",)),
    "hefei": ("anhui",),
    "wuhan": ("hubei",),
    "chengdu": ("sichuan",),
    "xian": ("shaanxi",),
    "changsha": ("hunan",),
    "zhengzhou": ("henan",),
    "qingdao": ("shandong",),
    "xiamen": ("fujian",),
    "guiyang": ("guizhou",),
    "ulanqab": ("neimenggu",),
    "qingyang": ("gansu",),
    "zhongwei": ("ningxia",),
}

# Chinese place names (a trailing 省 or 市 is ignored by readers) → the ids vendors files use.
PLACE_ALIASES: Mapping[str, str] = {
    "江苏": "jiangsu",
    "广东": "guangdong",
    "浙江": "zhejiang",
    "安徽": "anhui",
    "湖北": "hubei",
    "四川": "sichuan",
    "陕西": "shaanxi",
    "湖南": "hunan",
    "河南": "henan",
    "山东": "shandong",
    "福建": "fujian",
    "贵州": "guizhou",
    "内蒙古": "neimenggu",
    "甘肃": "gansu",
    "宁夏": "ningxia",
    "深圳": "shenzhen",
    "苏州": "suzhou",
    "南京": "nanjing",
    "无锡": "wuxi",
    "常州": "changzhou",
    "南通": "nantong",
    "扬州": "yangzhou",
    "镇江": "zhenjiang",
    "徐州": "xuzhou",
    "盐城": "yancheng",
    "淮安": "huaian",
    "连云港": "lianyungang",
    "宿迁": "suqian",
    "昆山": "kunshan",
    "广州": "guangzhou",
    "东莞": "dongguan",
    "佛山": "foshan",
    "珠海": "zhuhai",
    "惠州": "huizhou",
    "中山": "zhongshan",
    "韶关": "shaoguan",
    # Cities a job's data is often kept in (``workload.data_city`` takes any city, offers or not).
    "上海": "shanghai",
    "北京": "beijing",
    "杭州": "hangzhou",
    "武汉": "wuhan",
    "成都": "chengdu",
    "重庆": "chongqing",
    "天津": "tianjin",
    "西安": "xian",
    "合肥": "hefei",
    "长沙": "changsha",
    "郑州": "zhengzhou",
    "青岛": "qingdao",
    "宁波": "ningbo",
    "厦门": "xiamen",
    "贵阳": "guiyang",
    "乌兰察布": "ulanqab",
    "庆阳": "qingyang",
    "中卫": "zhongwei",
}

# The other way, for prose: a place id → its Chinese name (``suzhou`` → 苏州).
PLACE_NAMES_ZH: Mapping[str, str] = {place: chinese for chinese, place in PLACE_ALIASES.items()}

# Chinese city names, longest first, so 连云港 is read before a shorter name inside it could be.
_CHINESE_CITIES = sorted(
    ((chinese, place) for chinese, place in PLACE_ALIASES.items() if place in CITY_REGIONS),
    key=lambda pair: -len(pair[0]),
)
_LATIN_WORD = re.compile(r"[a-z]+")


def _one(found: Iterable[str]) -> str | None:
    distinct = set(found)
    return distinct.pop() if len(distinct) == 1 else None


def _chinese_city(name: str) -> str | None:
    found: list[str] = []
    rest = name
    for chinese, place in _CHINESE_CITIES:
        if chinese in rest:
            found.append(place)
            rest = rest.replace(chinese, " ")
    return _one(found)


def zone_city(names: Iterable[str], *, vendor_city: str = "") -> str | None:
    """The city a zone called by ``names`` (its display name, its id, ...) is in; ``None`` when none of
    the names places it in exactly one city. Chinese names are read before Latin ids."""
    listed = [name for name in names if name]
    for name in listed:
        if (city := _chinese_city(name)) is not None:
            return city
    known = CITY_REGIONS.keys() | {vendor_city}
    for name in listed:
        words = _LATIN_WORD.findall(name.casefold())
        if (city := _one(word for word in words if word in known)) is not None:
            return city
    return None


def city_region(city: str, vendor_region: str) -> str:
    """The region an offer in ``city`` is in: the vendor's own region when the city lies in it (or the
    city is unknown here), else the city's province."""
    regions = CITY_REGIONS.get(city)
    if not regions or vendor_region in regions:
        return vendor_region
    return regions[0]
