"""UI labels of the web apps in English, Vietnamese and Chinese.

The Laws' words follow the project glossary (``controller/laws/messages.py``): trọng tài /
裁判 (director), lỗi đánh sai / 藏牌 (revoke), nước / 墩 (trick). Alert texts themselves come
from the controller (``alert.text``); these are the pages' own words.
"""

from __future__ import annotations

LANGS = ("en", "vi", "zh")

LABELS: dict[str, dict[str, str]] = {
    "title": {"en": "Director's console", "vi": "Bàn điều khiển trọng tài",
              "zh": "裁判控制台"},
    "room": {"en": "Room", "vi": "Phòng thi đấu", "zh": "赛场"},
    "table": {"en": "Table", "vi": "Bàn", "zh": "桌"},
    "log": {"en": "Ruling log", "vi": "Nhật ký phán quyết", "zh": "裁决记录"},
    "login": {"en": "Log in", "vi": "Đăng nhập", "zh": "登录"},
    "logout": {"en": "Log out", "vi": "Đăng xuất", "zh": "退出"},
    "password": {"en": "Password", "vi": "Mật khẩu", "zh": "密码"},
    "name": {"en": "Director's name", "vi": "Tên trọng tài", "zh": "裁判姓名"},
    "wrong_password": {"en": "Wrong password.", "vi": "Sai mật khẩu.", "zh": "密码错误。"},
    "language": {"en": "Language", "vi": "Ngôn ngữ", "zh": "语言"},
    "board": {"en": "Board", "vi": "Ván", "zh": "牌"},
    "round": {"en": "Round", "vi": "Vòng", "zh": "轮"},
    "phase": {"en": "Phase", "vi": "Giai đoạn", "zh": "阶段"},
    "turn": {"en": "Turn", "vi": "Lượt", "zh": "轮到"},
    "contract": {"en": "Contract", "vi": "Hợp đồng", "zh": "定约"},
    "declarer": {"en": "Declarer", "vi": "ĐTTC", "zh": "庄家"},
    "tricks": {"en": "Tricks", "vi": "Nước", "zh": "墩数"},
    "trick": {"en": "Trick", "vi": "Nước", "zh": "墩"},
    "result": {"en": "Result", "vi": "Kết quả", "zh": "结果"},
    "score": {"en": "Score NS", "vi": "Điểm NS", "zh": "南北得分"},
    "tricks_played": {"en": "as played", "vi": "đã chơi", "zh": "实际"},
    "online": {"en": "online", "vi": "trực tuyến", "zh": "在线"},
    "offline": {"en": "offline", "vi": "mất kết nối", "zh": "离线"},
    "bridge": {"en": "Table unit", "vi": "Thiết bị bàn", "zh": "桌面设备"},
    "health": {"en": "Readers", "vi": "Đầu đọc", "zh": "读卡器"},
    "alerts": {"en": "Alerts", "vi": "Cảnh báo", "zh": "警报"},
    "no_alerts": {"en": "No alert.", "vi": "Không có cảnh báo.", "zh": "无警报。"},
    "director_called": {"en": "Director called", "vi": "Gọi trọng tài", "zh": "叫裁判"},
    "call_answered": {"en": "On my way", "vi": "Đang đến", "zh": "马上到"},
    "ago": {"en": "ago", "vi": "trước", "zh": "前"},
    "auction": {"en": "Auction", "vi": "Đấu giá", "zh": "叫牌"},
    "play": {"en": "Play", "vi": "Đánh bài", "zh": "打牌"},
    "penalty_cards": {"en": "Penalty cards", "vi": "Cây phạt", "zh": "罚张"},
    "obligations": {"en": "Obligations", "vi": "Nghĩa vụ", "zh": "义务"},
    "history": {"en": "History", "vi": "Lịch sử", "zh": "经过"},
    "options": {"en": "Rulings for this alert", "vi": "Phán quyết cho cảnh báo này",
                "zh": "此警报的裁决"},
    "table_actions": {"en": "Rulings for the table", "vi": "Phán quyết cho bàn",
                      "zh": "本桌裁决"},
    "select_alert": {"en": "Select an alert to see the rulings.",
                     "vi": "Chọn một cảnh báo để xem các phán quyết.",
                     "zh": "选择一个警报以查看裁决。"},
    "suit": {"en": "Suit", "vi": "Chất", "zh": "花色"},
    "seat": {"en": "Seat", "vi": "Hướng", "zh": "方位"},
    "card": {"en": "Card", "vi": "Quân bài", "zh": "牌张"},
    "export_csv": {"en": "Export CSV", "vi": "Xuất CSV", "zh": "导出 CSV"},
    "when": {"en": "When", "vi": "Thời gian", "zh": "时间"},
    "director": {"en": "Director", "vi": "Trọng tài", "zh": "裁判"},
    "alert": {"en": "Alert", "vi": "Cảnh báo", "zh": "警报"},
    "ruling": {"en": "Ruling", "vi": "Phán quyết", "zh": "裁决"},
    "answer": {"en": "Controller's answer", "vi": "Phản hồi của hệ thống", "zh": "系统回应"},
    "applied": {"en": "applied", "vi": "đã áp dụng", "zh": "已执行"},
    "refused": {"en": "refused", "vi": "bị từ chối", "zh": "被拒绝"},
    "pending": {"en": "sent, waiting for the controller", "vi": "đã gửi, đang chờ",
                "zh": "已发送，等待回应"},
    "no_tables": {"en": "No table has reported yet.", "vi": "Chưa có bàn nào báo cáo.",
                  "zh": "尚无桌报告。"},
    "connected": {"en": "live", "vi": "trực tiếp", "zh": "实时"},
    "disconnected": {"en": "reconnecting…", "vi": "đang kết nối lại…", "zh": "重新连接中…"},
    "errors": {"en": "Refused messages", "vi": "Thông điệp bị từ chối", "zh": "被拒绝的消息"},
    "hands": {"en": "Hands", "vi": "Bài các tay", "zh": "各家牌"},
    "back": {"en": "Back to the room", "vi": "Về phòng thi đấu", "zh": "返回赛场"},
    "passed_out": {"en": "passed out", "vi": "bỏ bài", "zh": "全不叫"},
    "status_open": {"en": "open", "vi": "đang mở", "zh": "待处理"},
    "status_established": {"en": "established", "vi": "được xác định", "zh": "成立"},
    "status_corrected": {"en": "corrected", "vi": "đã sửa", "zh": "已纠正"},
    "status_resolved": {"en": "resolved", "vi": "đã giải quyết", "zh": "已解决"},
    "phase_waiting": {"en": "waiting", "vi": "chờ", "zh": "等待"},
    "phase_scanning": {"en": "scanning hands", "vi": "quét bài", "zh": "扫描手牌"},
    "phase_auction": {"en": "auction", "vi": "đấu giá", "zh": "叫牌"},
    "phase_lead": {"en": "opening lead", "vi": "dẫn đầu", "zh": "首攻"},
    "phase_play": {"en": "play", "vi": "đánh bài", "zh": "打牌"},
    "phase_complete": {"en": "complete", "vi": "xong", "zh": "完成"},
    "phase_done": {"en": "done", "vi": "đã trả bài", "zh": "已归位"},
}


def label(key: str, lang: str) -> str:
    entry = LABELS.get(key)
    if entry is None:
        return key
    return entry.get(lang) or entry["en"]
