# ruff: noqa: RUF001  (full-width punctuation is what these sentences are written with)
"""Symptoms said in Chinese, Japanese and Korean (symptom_words.yaml zh/ja/ko, cjk_marks.yaml, parsers/text/cjk.py)."""

from __future__ import annotations

import pytest

from collectors.catalogs.symptom_words import LANGUAGES, symptom_words
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from collectors.parsers.text.words import read_words


def _said(text: str) -> list[str]:
    result = read_words(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    return [s for f in result.facts for s in f.value]


# A sentence per language around a subject and a problem, and the same denied, asked and settled: each language's own
# way (zh negates before the predicate, ja and ko after its stem; a question ends in 吗, か, 까 or a question mark).
SAID = {"zh": "从今天早上开始，{where}{subject}{gap}{problem}。",
        "ja": "今朝から{where}{subject}が{problem}。",
        "ko": "오늘 아침부터 {where}{subject} {problem}."}
DENIED = {"zh": "我们从未见过{where}{subject}{gap}{problem}。",
          "ja": "{where}{subject}が{problem}ことはありません。",
          "ko": "{where}{subject} {problem} 적은 없습니다."}
ASKED = {"zh": "{where}{subject}{gap}{problem}吗？",
         "ja": "{where}{subject}が{problem}のですか？",
         "ko": "{where}{subject} {problem}나요?"}
SETTLED = {"zh": "{where}{subject}{gap}{problem}的问题已解决。",
           "ja": "{where}{subject}が{problem}問題は解決しました。",
           "ko": "{where}{subject} {problem} 문제는 해결되었습니다."}
WHERE = {"zh": "我们{about}机器上的", "ja": "{about}マシンの", "ko": "{about} 서버의 "}


def _gap(subject: str, problem: str) -> str:
    """A space where two ASCII words would otherwise run together ("服务 IP ping 不通"), as people type them."""
    return " " if subject[-1:].isascii() and problem[:1].isascii() else ""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_subject_with_every_problem_is_read_in_each_language(lang: str) -> None:
    entries, _ = symptom_words()
    read = 0
    for entry in entries:
        words = getattr(entry.spec, lang)
        if words is None:
            continue
        about = (words.about or entry.spec.about or ("",))[0]
        where = WHERE[lang].format(about=about) if about else ""
        for subject in words.subjects or entry.spec.subjects:
            for problem in words.problems:
                said = SAID[lang].format(where=where, subject=subject, problem=problem, gap=_gap(subject, problem))
                assert entry.spec.symptom in _said(said), said
                read += 1
    assert read > 500  # every entry but the P-states' has its words in each language


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_problem_denied_asked_or_settled_in_each_language_says_nothing(lang: str) -> None:
    entries, _ = symptom_words()
    for entry in entries:
        words = getattr(entry.spec, lang)
        if words is None:
            continue
        about = (words.about or entry.spec.about or ("",))[0]
        where = WHERE[lang].format(about=about) if about else ""
        subjects = words.subjects or entry.spec.subjects
        for at, problem in enumerate(words.problems):
            subject = subjects[at % len(subjects)]
            for template in (DENIED[lang], ASKED[lang], SETTLED[lang]):
                said = template.format(where=where, subject=subject, problem=problem, gap=_gap(subject, problem))
                assert entry.spec.symptom not in _said(said), said


@pytest.mark.parametrize(("text", "symptom"), [
    ("GPU 利用率很低，只有 10%", "gpu-underutilized"),  # the brief's own example
    ("GPU 利用率只有 １０％", "gpu-underutilized"),  # full-width digits and percent sign
    ("GPU利用率不到10%", "gpu-underutilized"),  # 不到 "less than" is no negation
    ("不知道为什么GPU利用率很低", "gpu-underutilized"),  # "I don't know why" denies nothing
    ("GPU利用率很低，怎么办？", "gpu-underutilized"),  # a report, then a question in its own clause
    ("GPU使用率が10%しか出ない", "gpu-underutilized"),  # しか…ない is "only"
    ("GPU 사용률이 10%밖에 되지 않습니다", "gpu-underutilized"),  # 밖에…않 is "only"
    ("클러스터 안에서 서비스 IP로 연결이 안 됩니다", "service-unreachable"),  # 안에 is "inside", no negation
    ("Pod 一直处于 Pending 状态", "pending"),  # Kubernetes' English identifier kept in the sentence
    ("파드가 Pending 상태로 멈춰 있습니다", "pending"),
    ("PodがPendingのままです", "pending"),
    ("节点 NotReady 了", "node-not-ready"),
    ("nginx 返回 502", "error-rate"),
    ("延迟非常高", "latency"),
    ("Pod 不断重启", "crash-loop"),
    ("CPU占用率基本90%，但是GPU占用率只有2%", "gpu-underutilized"),  # another resource in another clause
])
def test_a_sentence_in_chinese_japanese_or_korean_says_its_symptom(text: str, symptom: str) -> None:
    assert symptom in _said(text)


@pytest.mark.parametrize("text", [
    "GPU 利用率并不低",  # the brief's negated example
    "问题已解决",  # the brief's settled example
    "GPU利用率很低的问题已解决。",
    "GPU利用率很低吗？",
    "为什么GPU利用率很低？",
    "为什么延迟很高，怎么办？",  # the problem's clause asks why
    "可能是延迟很高",  # hedged
    "如果 Pod 无法调度，autoscaler 会加节点。",  # a condition
    "高并发下延迟正常",  # a "high" that is not the latency's
    "GPU使用率は低くない。",
    "GPU使用率が低いのはなぜですか？",
    "GPU使用率が低いかもしれない",
    "GPU 사용률이 낮지 않습니다",
    "GPU 사용률이 낮나요?",
    "GPU 사용률이 낮을 수도 있습니다",
    "파드가 Pending 상태로 멈춰 있지 않습니다",
    "Pod 没有一直处于 Pending 状态",
    "GPU显存利用率很低",  # GPU memory, not the GPU's compute
    "Pod 被 kubectl drain 驱逐了",  # an API eviction, no kubelet's
])
def test_healthy_negated_asked_and_settled_sentences_say_nothing(text: str) -> None:
    assert _said(text) == []


# Sentences people wrote in public threads, verbatim, with the thread.
REAL = [
    # https://github.com/hiyouga/LlamaFactory/issues/5320 (its title)
    ("多卡训练时GPU利用率很低", "gpu-underutilized"),
    # https://github.com/hiyouga/LlamaFactory/issues/5320
    ("full finetune GPT2 small或medium model时，单卡运行GPU利用率可以基本跑满，"
     "但是多卡（2卡、8卡）运行时，其他任何参数包括max_steps都没有改动，但是GPU利用率随着卡数变多而下降。",
     "gpu-underutilized"),
    # https://github.com/Linzaer/Ultra-Light-Fast-Generic-Face-Detector-1MB/issues/299
    ("浅问一下 为啥我的训练GPU利用率极低，大概2%", "gpu-underutilized"),
    # https://github.com/shiyybua/NER/issues/17
    ("模型跑通了，但GPU使用率不超过20%，请问可能是什么问题导致的？", "gpu-underutilized"),
    # https://github.com/xinntao/Real-ESRGAN/issues/358
    ("你好，我在用v100跑官方代码的时候，GPU内存占满，CPU充满，但GPU利用率很低，而且很有规律请问这是什么原因引起的",
     "gpu-underutilized"),
    # https://github.com/qmh1234567/skin_disease_two_classification/issues/2
    ("本人训练的时候发现CPU占用率基本90%，但是GPU占用率只有2%，然而显存几乎全部占用，请问您的本机测试也是同样的效果吗？",
     "gpu-underutilized"),
    # https://github.com/yangxue0827/RotationDetection/issues/110
    ("我在使用两块GPU训练时，一块正常，另一块GPU的利用率极低接近0，请问这是正常的么？", "gpu-underutilized"),
    # https://github.com/zonasw/DBNet/issues/13 (its title)
    ("gpu利用率极低，利用率一直保持为0", "gpu-underutilized"),
    # https://github.com/wenet-e2e/wespeaker/issues/373 (its title)
    ("单机多卡训练，仅GPU=0有利用率，其他卡GPU利用率=0%", "gpu-underutilized"),
    # https://github.com/imroc/kubernetes-practice-guide/issues/6 (its title)
    ("Pod 一直处于 Pending 状态", "pending"),
    # https://github.com/lsw1991abc/lsw1991abc.github.io/issues/37 (its title)
    ("K8S中，Pod一直处于pending状态", "pending"),
    # https://github.com/alibaba/hybridnet/issues/425 (tests/realworld node-not-ready/hybridnet-425-...)
    ('master节点重加后一直notready： "Container runtime network not ready"', "node-not-ready"),
    # https://github.com/RosieOh/RoundHouse/issues/16 (tests/realworld oom-killed/roundhouse-16-...): the restarts
    ("Grafana 파드가 exit 137로 재시작을 반복했고 CPU를 9코어까지 썼습니다.", "crash-loop"),
]

# Sentences from public threads that name a subject and say nothing wrong with it, or only ask.
REAL_NOTHING = [
    # https://github.com/qqwweee/keras-yolo3/issues/455 (its title): how to fix low GPU utilisation, asked
    "如何解决训练过程中GPU利用率低？",
    # https://github.com/wenet-e2e/wespeaker/issues/373: the problem solved
    "问题解决了， 减少batch_size",
    # https://github.com/Project-HAMi/HAMi/issues/235: utilisation that cannot be read is not low utilisation
    "nvidia-smi 在容器中，无法获得使用率和processes的进程信息。",
]


@pytest.mark.parametrize(("line", "symptom"), REAL)
def test_a_real_sentence_says_its_symptom(line: str, symptom: str) -> None:
    assert symptom in _said(line)


@pytest.mark.parametrize("line", REAL_NOTHING)
def test_a_real_sentence_that_says_nothing_wrong_gives_nothing(line: str) -> None:
    assert _said(line) == []


@pytest.mark.parametrize(("denied", "said", "fact"), [
    ("Pod 并没有一直处于 Pending 状态，已经正常运行了", "Pod 一直处于 Pending 状态，已经等了很久了", "pod.phase"),
    ("容器没有被 OOMKilled，是正常退出的", "容器被 OOMKilled 了，是内存不够导致的", "container.last_terminated.reason"),
])
def test_the_stated_reader_takes_a_chinese_negation_too(denied: str, said: str, fact: str) -> None:
    # The identifiers the stated reader reads (stated.yaml) are denied the same way in these languages.
    def names(text: str) -> set[str]:
        return {f.name for f in parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, source="paste",
                                                        content=text)).facts}
    assert fact not in names(denied)
    assert fact in names(said)
