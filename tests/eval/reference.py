"""Independent re-statements of the benchmarks' official scoring, in their own data formats.

Written from reading the official scripts (not copied), keeping their arithmetic and their
denominators, so the package's metrics can be cross-checked on rows of the real annotation files:
- NExT-GQA ``code/TempGQA/eval_ground.py`` (``get_tIoU`` / ``eval_ground``),
- ReXTime ``evaluation/rextime_eval.py`` + ``utils.py`` (``compute_gqa_r1``, ``eval_vqa``),
- CG-Bench ``run/utils.py`` (``calculate_intervals_iou``) + ``run/stat_with_key.py``.
All return percentages.
"""

from __future__ import annotations

import numpy as np


def nextgqa_eval_ground(gt_ground: dict, pred_ground: dict, pred_qa: dict) -> dict[str, float]:
    """gt_ground: gsub format {vid: {"location": {qid: [[s, e], ...]}}}; pred_ground: {"vid_qid": [s, e]};
    pred_qa: {"vid_qid": {"answer": a, "prediction": p}}."""

    def t_iou(loc, span):
        if span[0] == span[-1]:  # a point prediction
            return (0, 1) if loc[0] <= span[0] <= loc[1] else (0, 0)
        inter = min(loc[-1], span[-1]) - max(loc[0], span[0])
        hull = max(loc[-1], span[-1]) - min(loc[0], span[0])
        return (inter / hull if hull > 0 else 0.0), (inter / (span[-1] - span[0]) if span[-1] > span[0] else 0.0)

    n = gqa = p3 = p5 = u3 = u5 = 0
    m_iou = m_iop = 0.0
    for vid, anno in gt_ground.items():
        for qid, locs in anno["location"].items():
            key = f"{vid}_{qid}"
            if key not in pred_ground:
                continue
            best_u = best_p = 0
            for loc in locs:
                u, p = t_iou(loc, pred_ground[key])
                best_u, best_p = max(best_u, u), max(best_p, p)
            p3 += best_p >= 0.3
            p5 += best_p >= 0.5
            gqa += best_p >= 0.5 and pred_qa[key]["answer"] == pred_qa[key]["prediction"]
            u3 += best_u >= 0.3
            u5 += best_u >= 0.5
            n += 1
            m_iou += best_u
            m_iop += best_p
    return {
        "Acc@GQA": gqa / n * 100,
        "mIoP": m_iop / n * 100,
        "IoP@0.3": p3 / n * 100,
        "IoP@0.5": p5 / n * 100,
        "mIoU": m_iou / n * 100,
        "IoU@0.3": u3 / n * 100,
        "IoU@0.5": u5 / n * 100,
    }


def rextime_eval(submission: list[dict], ground_truth: list[dict]) -> dict[str, float]:
    """submission: [{"qid", "pred_relevant_windows": [[s, e], ...], "ans"}]; ground_truth: rextime jsonl rows.
    The official script asserts both hold the same qids."""
    assert {d["qid"] for d in submission} == {d["qid"] for d in ground_truth}
    pred = {d["qid"]: d["pred_relevant_windows"][0][:2] for d in submission}
    pred_ans = {d["qid"]: d["ans"] for d in submission}
    gt_ans = {d["qid"]: d["ans"] for d in ground_truth}
    gt_window = {}
    for d in ground_truth:
        windows = np.array(d["relevant_windows"], dtype=float)
        p = np.array([pred[d["qid"]]], dtype=float)
        inter = np.clip(
            np.minimum(p[:, None, 1], windows[None, :, 1]) - np.maximum(p[:, None, 0], windows[None, :, 0]), 0, None
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            cross = inter / ((p[:, 1] - p[:, 0])[:, None] + (windows[:, 1] - windows[:, 0])[None, :] - inter)
        gt_window[d["qid"]] = d["relevant_windows"][int(np.argmax(cross[0]))]
    qids = list(pred)
    pw = np.array([pred[q] for q in qids], dtype=float)
    gw = np.array([gt_window[q] for q in qids], dtype=float)
    inter = np.maximum(0, np.minimum(pw[:, 1], gw[:, 1]) - np.maximum(pw[:, 0], gw[:, 0]))
    hull = np.maximum(pw[:, 1], gw[:, 1]) - np.minimum(pw[:, 0], gw[:, 0])
    ious = np.divide(inter, hull, out=np.zeros_like(inter), where=hull != 0)
    correct = np.array([pred_ans[q] == gt_ans[q] for q in qids])
    out = {"mIoU": float(np.mean(ious) * 100), "Acc": float(np.mean(correct) * 100)}
    for t in (0.3, 0.5, 0.7):
        out[f"R1@{t}"] = float(np.mean(ious >= t) * 100)
        out[f"Acc@IoU>={t}"] = float(np.mean((ious >= t) & correct) * 100)
    return out


def cgbench_intervals_iou(pred: list, gt: list) -> float:
    def merge(intervals):
        intervals = sorted((list(i) for i in intervals), key=lambda x: x[0])
        out = []
        for cur in intervals:
            if out and cur[0] <= out[-1][1]:
                out[-1][1] = max(out[-1][1], cur[1])
            else:
                out.append(cur)
        return out

    a, b = merge(pred), merge(gt)
    inter = sum(max(0, min(x[1], y[1]) - max(x[0], y[0])) for x in a for y in b)
    union = sum(e - s for s, e in a) + sum(e - s for s, e in b) - inter
    return inter / union if union > 0 else 0


def cgbench_stats(annotations: list[dict], miou_results: dict, long_acc_results: dict) -> dict[str, float]:
    """miou_results: {qid: iou} for questions whose grounding answer was parsed; long_acc_results: {qid: 0/1}
    for questions whose letter was parsed (the scripts save only those)."""
    ths = (0.1, 0.2, 0.3, 0.4, 0.5)
    rec_total = acc_total = 0
    rec_hits = dict.fromkeys(ths, 0)
    acc_hits = dict.fromkeys(ths, 0)
    for anno in annotations:
        q = anno["qid"]
        if q in miou_results:
            rec_total += 1
            for t in ths:
                rec_hits[t] += miou_results[q] >= t
        if q in miou_results and q in long_acc_results:
            acc_total += 1
            for t in ths:
                acc_hits[t] += miou_results[q] >= t and long_acc_results[q] == 1
    return {
        "Acc": sum(long_acc_results.values()) / len(long_acc_results) * 100,
        "mIoU": sum(miou_results.values()) / len(miou_results) * 100,
        "rec.@IoU": sum(rec_hits.values()) / (rec_total * 5) * 100,
        "acc.@IoU": sum(acc_hits.values()) / (acc_total * 5) * 100,
    }
