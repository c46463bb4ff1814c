"""GPU utilisation as people say it (stated.yaml's gpu-util-bare-figure, nvidia-smi-util-figure, gpu-util-swings):
the figure without a percent sign, the figure credited to nvidia-smi rather than to its column, and a GPU-Util
said to swing between busy and idle; the figure of a GPU named without the word GPU beside it
(gpu-named-util-figure, gpu-board-util-figure), and a utilisation said to rise and fall or to drop to zero at a
period (gpu-named-util-swings, gpu-util-varies-from-zero, gpu-util-rises-and-falls, gpu-util-zero-periodically).
Negated, asked, past, conditional and other resources' figures are not read, nor is a one-off drop; healthy
figures name no symptom."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts


# Synthetic sentences, one per way of saying it (the column's names and the verbs people put before the figure).
@pytest.mark.parametrize(("sentence", "figure"), [
    ("the GPU-Util is 0 most of the time", 0.0),
    ("GPU util 0 during the whole epoch", 0.0),
    ("our volatile GPU-Util stays at about 3 while training", 3.0),
    ("the gpu usage is only 12 on both cards", 12.0),
    ("I checked nvidia-smi and the utilization was under 10% the whole time", 10.0),
    ("nvidia-smi shows 5% GPU-Util for the training process", 5.0),
    # the bare noun after a determiner in a sentence that names the GPU (gpu-named-util-figure)
    ("With the V100 the utilization is 7%.", 7.0),
    ("On our A100 nodes the ultilization stays around 15 percent.", 15.0),
    ("I train on an RTX 3090 and its utilization drops from 90% to 0-20%.", 0.0),
    ("When I use tesla V100 16GB to train, the utilization can be up to 98%.", 98.0),
    ("my GPU (Tesla T4) usage is 12%", 12.0),
])
def test_a_figure_said_in_words_is_read(sentence: str, figure: float) -> None:
    assert stated_facts(sentence).get("gpu.job_util_percent") == figure, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "the GPU usage is 2 GB on each card",  # memory, not utilisation
    "GPU load at 300 W during the run",  # power
    "nvidia-smi shows 95% memory usage and the job is fine",  # another resource's figure
    "is the GPU-Util 0 when the job waits?",  # asked
    "the GPU-Util is not 0 on any card",  # negated
    "On the V100 box the CPU utilization is 100% and the utilization of memory is 80%.",  # other resources
    "The server utilization is 5% and it has no accelerator.",  # no GPU named
    "Is the utilization on my A100 only 10%?",  # asked
    "On the A100 the utilization is not 10%.",  # negated
    "On the A100 the utilization used to be 10% before the upgrade.",  # history
])
def test_a_figure_of_something_else_or_asked_is_not_read(sentence: str) -> None:
    assert "gpu.job_util_percent" not in stated_facts(sentence), stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "the GPU utilization fluctuates between 0 and 100 during the epoch",
    "the GPU usage is unstable during training",
    "the gpu util is not stable from 0% to 90%",
    "GPU-Util always jumps from 90% to 0% and back",
    "the GPU load keeps oscillating while the job runs",
    "GPU利用率忽高忽低，训练很慢",  # noqa: RUF001
    # a named GPU's utilisation, or one varying from zero (gpu-named-util-swings, gpu-util-varies-from-zero)
    "On my RTX 2080 the utilization becomes low and unstable.",
    "With the A100 the utilization keeps fluctuating.",
    "On the V100 the utilization varies from 0 to 30%.",
    "The GPU usage varies between 0 and 60% during training.",
    "GPU util ranges from 0 to 40% on every card.",
    "The GPU-Util is 20% for one second, drops to 0% the next and then goes back to 20% again.",
    "The GPU utilization becomes 0 every few seconds.",
    "I watch the GPU utilization in nvidia-smi and it fluctuates between 0% and 70%.",
    # a rise and fall, or a drop to zero at a period (gpu-util-rises-and-falls, gpu-util-zero-periodically)
    "The GPU utilization goes up and down all the time.",
    "GPU usage rate keeps changing ups and downs during the epoch.",
    "The gpu utilisation rises and falls while training.",
    "GPU util climbs from 5% up to 80% and then back down to 5% again.",
    "The GPU usage goes from ~2% to about 70% and down to 0-2% again.",
    "Every 20 steps the GPU util drops to 0%.",
    "Periodically the training pauses and GPU usage goes to zero.",
    "The GPU utilization falls to 0% every few seconds.",
    "GPU-Util drops to 0 every 100 iterations while one CPU core is busy.",
    # the noun with "rate" after it and an adverb before the verb (round 11)
    "On the H100 the utilization rate significantly fluctuates between 0-100.",
    "The GPU utilization rate greatly fluctuates during inference.",
])
def test_a_swinging_gpu_util_is_read_as_the_symptom(sentence: str) -> None:
    got = stated_facts(sentence)
    assert got.get("gpu.util_swings") is True and "gpu-underutilized" in got.get("symptoms", set()), got  # type: ignore[operator]


@pytest.mark.parametrize("sentence", [
    "GPU-Util jumps to 100% as soon as the job starts",  # a rise to busy, no swing to idle
    "does the GPU utilization fluctuate when the loader is slow?",  # asked
    "if the GPU usage oscillates we add loader workers",  # conditional
    "the GPU usage used to fluctuate before we cached the dataset",  # history
    "the GPU util is not fluctuating at all",  # negated inside the phrase, not before it
    "The GPU usage varies between 80 and 95% during training.",  # never idle
    "On the V100 the utilization is not unstable at all.",  # negated
    "Does the GPU utilization vary from 0 to 100% when the loader is slow?",  # asked
    "If the GPU util drops to 0% and comes back again, add workers.",  # conditional
    "The CPU utilization varies from 0 to 100% on the node.",  # another resource
    "The GPU util is 95% while the CPU load fluctuates between 0 and 100% on the node and the disk is busy.",
    "The GPU utilization goes from 80% up to 95% and back down to 85% again.",  # never idle
    "The CPU utilization goes up and down all the time.",  # another resource
    "The GPU utilization does not go up and down.",  # negated
    "Does the GPU util drop to 0% every 50 steps?",  # asked
    "Every 50 steps we save a checkpoint and the GPU memory is 20 GB.",  # no utilisation
    "The CPU utilization rate significantly fluctuates between 0-100 on the node.",  # another resource
    "Does the GPU utilization rate fluctuate greatly?",  # asked
])
def test_no_swing_is_read_from_a_rise_a_question_a_condition_or_history(sentence: str) -> None:
    got = stated_facts(sentence)
    assert "gpu.util_swings" not in got and "symptoms" not in got, got


# Verbatim lines from public threads (whole lines), with the thread beside each.
REAL = [
    ("https://github.com/jwyang/faster-rcnn.pytorch/issues/770",
     "When I train the model, the GPU memory is occupied, but GPU-Util is always 0. What's the re",
     {"gpu.job_util_percent": 0.0}),
    ("https://github.com/rbgirshick/py-faster-rcnn/issues/871",
     "Hi,gpu-util is always 0, but occupies GPU memory. my training speed is very slow. In most cases, 100 "
     "iterations will take nearly two hours.I used a single GPU（NVIDIA 1080）, CUDA8.0, cudn 6.0。Tell me, what can "  # noqa: RUF001
     "I do to improve my gpu-util。",
     {"gpu.job_util_percent": 0.0, "job.said_running": True}),
    ("https://github.com/neptune-ai/open-solution-salt-identification/issues/21",
     "nvidia-smi gives 0% percentage GPU-Util most of the time(in offline mode). Am I doing something wrong? Using "
     "the same config file as in [solution-3]. CPU usage is high most of the time.",
     {"gpu.job_util_percent": 0.0}),
    ("https://github.com/poier/PreView/issues/5",
     "Hi, Thank you for your codes. And I changed to another benchmark, but the volatile gpu-util is very low and "
     "fluctuant.  Can yo give me some advice about it. Thank you very much!",
     {"gpu.util_swings": True}),
    ("https://github.com/ultralytics/yolov3/issues/1926",
     "Hello，My GPU utilization fluctuates wildly, every few seconds, and goes from 40% to 90%. How can I deal with "  # noqa: RUF001
     "it? Thank you~",
     {"gpu.util_swings": True, "symptoms": {"gpu-underutilized"}}),
    ("https://github.com/hustvl/YOLOP/issues/188",
     "如题，训练的时候，GPU利用率忽高忽低，导致模型训练很慢，时间很长。尝试过以下的措施：",  # noqa: RUF001
     {"gpu.util_swings": True, "symptoms": {"gpu-underutilized"}}),
    ("https://github.com/THU-DA-6D-Pose-Group/GDR-Net/issues/114",
     "I found that the IO speed is quite slow in the result that utility of GPU is relative low(~30). The GPU "
     "utilization rate will even become 0 every few seconds. The training time on ycbv is more than 26 hours. I "
     "whether is there any optimized strategy on this dataloader to speed up this process.",
     {"gpu.util_swings": True, "symptoms": {"gpu-underutilized"}}),
    ("https://github.com/chrisdonahue/wavegan/issues/81",
     "Hello, I am training on 192 wav files of around 7 seconds duration on a Tesla V100 GPU. While training, I "
     "monitor the GPU Utilization with the `nvidia-smi` and the results that I get is that i highly fluctuates from "
     "0% up until 60%. This is probably an indicator that there is a bottleneck somewhere and that the GPU isn't fed "
     "data fast enough. ",
     {"gpu.util_swings": True, "symptoms": {"gpu-underutilized"}}),
    ("https://github.com/xinntao/Real-ESRGAN/issues/358",
     "The same as you, my GPU(NVIDIA Tesla T4 GRID T4-8Q) utilization between 20%~50%, if the card is T4（100%） "  # noqa: RUF001
     ",it will become lower; The graphics card basically gets lower utilization, but takes up a lot of CPU and memory",
     {"gpu.job_util_percent": 20.0, "gpu.util_swings": None}),
    ("https://github.com/WongKinYiu/yolov7/issues/2064",
     "We are encountering a problem during training, which I believe is related to the dataloader. During training,"
     " **GPU utilization sometimes drops to 0% and at other times increases to 50%-70%,** resulting in very long"
     " iteration times. One epoch takes almost 50 minutes. I tried increasing the number of workers (16, 24), but it"
     " did not fix the issue.",
     {"gpu.util_swings": True}),
    ("https://github.com/yuliangguo/depth_any_camera/issues/16",
     "During training, my GPU utilization fluctuates constantly with significant swings. Is this due to my hardware"
     " configuration, or is this normal behavior? Will it impact training efficiency?",
     {"gpu.util_swings": True, "symptoms": {"gpu-underutilized"}}),
    ("https://github.com/tloen/alpaca-lora/issues/584",
     "I have run the demo successfully, however, I found that the GPU utilization fluctuates between 0% and 90%"
     " rapidly. And only 1 GPU  working at the same time... This will significantly increase the total training"
     " time. (Now it takes approximately 8 hours on 4*v100)",
     {"gpu.util_swings": True, "symptoms": {"gpu-underutilized"}}),
]


@pytest.mark.parametrize(("url", "text", "expected"), REAL, ids=[r[0] for r in REAL])
def test_a_real_sentence_is_read(url: str, text: str, expected: dict[str, object]) -> None:
    got = stated_facts(text)
    assert {k: got.get(k) for k in expected} == expected, (url, got)


# Healthy figures from public threads: read, and too high to run anything.
@pytest.mark.parametrize(("url", "text", "figure"), [
    ("https://github.com/hotpotqa/hotpot/issues/7",
     "I also use Telsa P100 with 16GB memory, but my GPU-Utilization is 66%.", 66.0),
    ("https://github.com/hotpotqa/hotpot/issues/7",
     "I am using GTX1080TI, GPU-Utilization is 86%, about 780ms/batch.", 86.0),
])
def test_a_real_healthy_figure_names_no_symptom(url: str, text: str, figure: float) -> None:
    got = stated_facts(text)
    assert got.get("gpu.job_util_percent") == figure and "symptoms" not in got and "gpu.util_swings" not in got, (
        url, got)


# The job said to run when the table was taken, or to run slowly: an idle table beside it is the job's.
@pytest.mark.parametrize("sentence", [
    "Here is a snapshot of nvidia-smi during training:",
    "the output below is from while the job was running",
    "the training is very slow",
    "for us each step takes a really long time",
    "I am running the training on one node",
    "During training, the utilization of GPU0 stays at 0%.",
    "while training the model the first GPU is idle",
])
def test_the_job_said_running_is_read(sentence: str) -> None:
    assert stated_facts(sentence).get("job.said_running") is True, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "the training is not slow at all",  # negated
    "is the training slow?",  # asked
    "if the training is slow we add workers",  # conditional
    "the network is slow today",  # no job named
    "the data loader is set up during training script start-up",  # the script, not a run
    "is it normal during training?",  # asked
])
def test_no_job_running_is_read_from_a_negation_a_question_or_another_slowness(sentence: str) -> None:
    assert "job.said_running" not in stated_facts(sentence), stated_facts(sentence)


@pytest.mark.parametrize(("url", "text", "expected"), [
    ("https://github.com/yilundu/nerflow/issues/6",
     "hello，I have started training.But there is a problem, the model training is very slow. The first command "  # noqa: RUF001
     "ran for 20 hours, and the second stream consistency training also ran for more than 20 hours to complete 50% "
     "of the progress, and my GPU utilization was only 3%. My configuration is a single Nvidia 3090 Ti GPU. I didn't "
     "modify your code, have you ever encountered this situation?",
     {"job.said_running": True, "gpu.job_util_percent": 3.0}),
    ("https://github.com/smallcorgi/3D-Deepbox/issues/44",
     "Hi, I am running the training and it seems it was very slow. Take more than one hour to complete one epoch. "
     "Here is the output of nvidia-smi:",
     {"job.said_running": True}),
    ("https://github.com/espnet/espnet/issues/1861",
     "during training ,the gpu is 0 for 30-50s. Anyone happend it like this",
     {"job.said_running": True}),
    # A question: nothing is reported.
    ("https://github.com/amdegroot/ssd.pytorch/issues/539",
     "Why is training so slow and GPU utilization so low?",
     {"job.said_running": None, "symptoms": None}),
])
def test_a_real_sentence_says_the_job_ran(url: str, text: str, expected: dict[str, object]) -> None:
    got = stated_facts(text)
    assert {k: got.get(k) for k in expected} == expected, (url, got)


# One GPU of several used, and the input side said slow: real lines from public threads.
@pytest.mark.parametrize(("url", "text", "expected"), [
    ("https://github.com/pyg-team/pytorch_geometric/issues/3272",
     "I followed the code in examples/multi-gpu/data_parallel.py to do training on multiple GPUs. However, when "
     "inspecting the status of the GPUs with nvidia-smi, I only see the first GPU being utilized. The same happens "
     "when using as device 'cuda:0' or just 'cuda' (the latter being suggested here "
     "https://stackoverflow.com/questions/54216920/how-to-use-multiple-gpus-in-pytorch).",
     {"symptoms": {"gpu-underutilized"}}),
    ("https://github.com/deepinsight/insightface/issues/1311",
     "When using the multi-gpus training model, there is always one gpu with a particularly low utilization rate. "
     "May I ask how to solve this problem",
     {"symptoms": {"gpu-underutilized"}}),
    ("https://github.com/open-mmlab/mmpretrain/issues/350",
     "I train resnet50 on imagenet with 4 RTX 2080TI (dist train). I found that one GPU is always in very low usage, "
     "meanwhile, the utilization rate of CPU decreases too. Detailed info is listed below:",
     {"symptoms": {"gpu-underutilized"}}),
    ("https://github.com/open-mmlab/mmpretrain/issues/350",
     "It seems dataloader can not provide data in time.",
     {"train.input_said_slow": True, "symptoms": None}),
    ("https://github.com/THU-DA-6D-Pose-Group/GDR-Net/issues/114",
     "I found that the IO speed is quite slow in the result that utility of GPU is relative low(~30). The GPU "
     "utilization rate will even become 0 every few seconds. The training time on ycbv is more than 26 hours. I "
     "whether is there any optimized strategy on this dataloader to speed up this process.",
     {"train.input_said_slow": True}),
])
def test_a_real_sentence_says_one_gpu_or_the_input(url: str, text: str, expected: dict[str, object]) -> None:
    got = stated_facts(text)
    assert {k: got.get(k) for k in expected} == expected, (url, got)


@pytest.mark.parametrize("sentence", [
    "we are waiting for the data team to reply",  # no loader
    "the data loader is not slow at all",  # negated
    "the disk is full on the node",  # full, not slow
    "is the sampler the bottleneck here?",  # asked
    "only one GPU is free on the node",  # a free GPU is no job's
    "not only one GPU is used but all of them",  # negated
])
def test_no_one_gpu_or_input_is_read_from_these(sentence: str) -> None:
    got = stated_facts(sentence)
    assert "train.input_said_slow" not in got and "symptoms" not in got, got


def test_a_question_about_the_figure_reports_nothing_but_a_report_followed_by_why_does() -> None:
    """The stated rule on main: a sentence asking about what it names is no report, whatever figure it holds; a
    report followed by a bare "why?" still is."""
    assert stated_facts("why is GPU util 0?") == {}
    assert stated_facts("Why is the GPU utilization of my A100 only 10%?") == {}
    assert stated_facts("The GPU util is 0% on the V100. Why?").get("gpu.job_util_percent") == 0.0


# https://github.com/MIC-DKFZ/nnUNet/issues/680 (issue description, verbatim sentences): the GPU computing in bursts,
# said as zeroes in between and as drops to zero again and again.
@pytest.mark.parametrize("text", [
    "When I run nnUnet on a cluster managed by slurm, nvidia-smi is reporting jumps of GPU activity with zeroes in "
    "between.",
    "Although I have modified the environment variable nnUNet_n_proc_DA to CPU threads I have, the utilization rate "
    "of GPU will occasionally drop to 0, and I found that some processes are always sleeping in  `top` .",
])
def test_bursts_with_zeroes_between_or_repeated_drops_to_zero_are_a_swing(text: str) -> None:
    assert stated_facts(text).get("gpu.util_swings") is True


@pytest.mark.parametrize("sentence", [
    "Does the utilization of the GPU occasionally drop to 0?",  # asked
    "The memory utilization of the GPU occasionally drops to 0.",  # memory, not the GPU's compute
    "GPU memory usage sometimes drops to zero between epochs.",  # memory
    "CPU usage comes in bursts with zeroes in between.",  # not the GPU
    "The GPU utilization never drops to 0.",  # no swing said
])
def test_no_swing_is_read_from_memory_a_question_or_a_steady_gpu(sentence: str) -> None:
    assert "gpu.util_swings" not in stated_facts(sentence)


def test_a_single_drop_to_zero_is_no_swing() -> None:
    assert "gpu.util_swings" not in stated_facts("GPU util dropped to 0% once after the job finished."), \
        stated_facts("GPU util dropped to 0% once after the job finished.")


# A job spread over more GPUs or machines said to run slower than on one (stated:scaling-said-slower): its time goes to
# synchronising them, gradient-sync's sign (seed 001:626).
@pytest.mark.parametrize(("url", "text"), [
    ("https://github.com/tatsu-lab/stanford_alpaca/issues/200",
     "when I use two A100 nodes, each node is (80GX8). I found two nodes train is slower than one node. I use torchrun"
     " xxx. can any one meet this?"),
    ("https://github.com/facebookresearch/fairchem/issues/432",
     "I found using 2 nodes is significantly slower than using 1 node 8 gpus. Here is my script:"),
    ("https://github.com/horovod/horovod/issues/2976", "# The speed of multi-node is slower than single-node"),
    # Chinese: "two nodes take 90 s per iteration, one machine about 4 s: more machines are slower instead?"
    ("https://github.com/hiyouga/LlamaFactory/issues/5014",
     "按正常情况，2个节点训练比单个节点要快很多，但是测试下来2个节点每个iter耗时90s，而单机训练时每个iter耗时仅4s左右，"  # noqa: RUF001
     "多机反而更慢？"),  # noqa: RUF001
])
def test_a_real_sentence_says_more_gpus_run_slower(url: str, text: str) -> None:
    assert stated_facts(text).get("train.scaling_said_slower") is True, url


@pytest.mark.parametrize("sentence", [
    "Using 4 GPUs with DDP is slower than a single GPU.",
    "Training on two machines is even slower than training on one machine with one gpu.",
])
def test_more_gpus_said_slower_than_one_is_read(sentence: str) -> None:
    assert stated_facts(sentence).get("train.scaling_said_slower") is True


@pytest.mark.parametrize("sentence", [
    "Is multi-node training slower than single-node?",  # asked
    "If 2 nodes are slower than 1 node, check the network.",  # conditional
    "Inference on the CPU is slower than on one GPU.",  # no job spread over several
    "The new model is slower than the old one on a single GPU.",  # two models, not a spread job
    "Training on 8 GPUs is not slower than on one GPU.",  # negated
    "多机训练比单机快很多。",  # more machines train much faster than one
    "多机训练并不比单机慢。",  # negated: more machines are not slower than one
    "单卡训练比多卡慢。",  # one card slower than several: the spread job is the fast one
    "多机训练没有反而更慢。",  # negated
    # https://github.com/IBM/FfDL/issues/169: said inside a question, which the stated rules leave unread
    "@Tomcli   I can run pytorch distributed training on multi nodes, but I find that speed of distributed training on"
    " two servers is slower than that on one server, I don't know why, can you help me see it deeply? Thank you.",
])
def test_no_scaling_slowdown_is_read_from_a_question_a_condition_or_another_comparison(sentence: str) -> None:
    assert "train.scaling_said_slower" not in stated_facts(sentence)


# The GPU's compute utilisation said with its own words ("compute", "computational power", a possessive) and a
# server said not to use the GPU fully (round 11, serving engines).
@pytest.mark.parametrize(("url", "text", "expected"), [
    ("https://github.com/vllm-project/vllm/issues/9953",
     "Hi thanks for the library! However, when using it to run inference of ~1B models, it seems that vllm does not"
     " use GPU fully. In short, it has only ~50 gpu utilization and ~30 gpu memory bandwidth.",
     {"symptoms": {"gpu-underutilized"}}),
])
def test_a_real_serving_sentence_is_read(url: str, text: str, expected: dict[str, object]) -> None:
    got = stated_facts(text)
    assert {k: got.get(k) for k in expected} == expected, (url, got)


@pytest.mark.parametrize("sentence", [
    "vLLM does use the GPU fully now.",  # no negation: busy
    "Why does vllm not use the GPU fully?",  # asked
    "The GPU's memory usage is 20% of the card.",  # memory, not compute
])
def test_a_full_gpu_a_question_or_memory_is_no_low_compute(sentence: str) -> None:
    got = stated_facts(sentence)
    assert "symptoms" not in got and "gpu.job_util_percent" not in got, got


# The GPU's compute utilisation said; its share said from the job's side, or noun first
# (stated:gpu-share-used-figure, stated:gpu-util-of-figure); a memory share, a question or a condition: none.
@pytest.mark.parametrize(("sentence", "figure"), [
    ("The GPU compute utilization is only around 20% while the KV cache is full.", 20.0),
    ("On the H800 the GPU's computational power utilization is only around 20%", 20.0),
    ("GPU core usage stays at 15% during decoding.", 15.0),
    ("It only uses 30% of the GPU.", 30.0),
    ("vLLM only uses about 20% of the GPU while the queue grows.", 20.0),
    ("the usage of GPU is only 20% during training.", 20.0),
    ("The utilization of the GPUs stays at 30%.", 30.0),
    ("The model uses 30% of the GPU memory.", None),  # memory
    ("the usage of GPU memory is 20%.", None),  # memory
    ("Does it use 30% of the GPU?", None),  # asked
    ("If it uses 30% of the GPU, raise the batch size.", None),  # conditional
])
def test_the_gpu_utilisation_said_is_the_job_s_figure(sentence: str, figure: float | None) -> None:
    assert stated_facts(sentence).get("gpu.job_util_percent") == figure


# nvidia-smi's reading said to swing between zero and a figure (stated.yaml nvidia-smi-util-swings).
@pytest.mark.parametrize(("url", "text"), [
    ("https://github.com/chrisdonahue/wavegan/issues/81",
     "While training, I monitor the GPU Utilization with the `nvidia-smi` and the results that I get is that i highly "
     "fluctuates from 0% up until 60%."),
])
def test_nvidia_smi_said_to_swing_from_zero_is_read(url: str, text: str) -> None:
    assert stated_facts(text).get("gpu.util_swings") is True, (url, stated_facts(text))


@pytest.mark.parametrize("sentence", [
    "nvidia-smi shows the memory between 0 and 60% full",  # no swing said
    "nvidia-smi fluctuates between 40% and 60%",  # never idle
])
def test_nvidia_smi_without_a_swing_to_zero_is_no_swing(sentence: str) -> None:
    assert "gpu.util_swings" not in stated_facts(sentence), stated_facts(sentence)
