"""The one settings model: TRIAGEBOT_* environment variables, over an optional YAML file."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    YamlConfigSettingsSource,
)

from bot.policy import Permissions, Route

_FOLDER = re.compile(r"[A-Za-z0-9._-]{1,100}(?:/[A-Za-z0-9._-]{1,100}){0,4}")


class ConfigError(ValueError):
    """A missing or malformed setting; the message names it."""


_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


class Settings(BaseSettings):
    """Everything triagebot can be told. Environment variables win over the YAML file (TRIAGEBOT_CONFIG)."""

    model_config = SettingsConfigDict(env_prefix="TRIAGEBOT_", extra="forbid", populate_by_name=True)

    # Kubernetes: a kubeconfig (and context), or the in-cluster service account when neither is set.
    kubeconfig: Path | None = Field(None, description="kubeconfig file, or a list (a:b) merged as kubectl "
                                   "merges it; default KUBECONFIG, ~/.kube/config, then in-cluster")
    context: str | None = Field(None, description="kubeconfig context")
    cluster_name: str | None = Field(None, description="name shown in reports")
    # Prometheus.
    prometheus_url: str | None = Field(None, description="e.g. http://prometheus.monitoring:9090")
    prometheus_token: SecretStr | None = Field(None, description="bearer token for Prometheus, if it needs one")
    # Node agent.
    agent_url_template: str = Field("http://{node_ip}:9105", description="how to reach a node's agent; "
                                    "{node} and {node_ip} are filled in")
    agent_token: SecretStr | None = Field(None, description="shared bearer token of the node agents")
    flight_recorder_dir: str | None = Field(
        None, description="folder under the nodes' /var/log where training jobs write their Flight Recorder dumps "
        "(docs/nccl.md); read through nodes/proxy when set")
    kubelet_logs: bool = Field(True, description="read the kubelet's journal of the target's nodes through "
                               "nodes/proxy (the kubelet-logs RBAC component); false where that is not granted")
    # Budgets.
    call_timeout: float = Field(5.0, gt=0, le=60, description="seconds per API call")
    deadline: float = Field(20.0, gt=0, le=300, description="seconds for all sources of one triage")
    default_since: str = Field("30m", description="window when none is given")
    # Slack. The credentials use Slack's standard variable names.
    slack_bot_token: SecretStr | None = Field(
        None, validation_alias=AliasChoices("SLACK_BOT_TOKEN", "slack_bot_token"), description="xoxb-... token")
    slack_signing_secret: SecretStr | None = Field(
        None, validation_alias=AliasChoices("SLACK_SIGNING_SECRET", "slack_signing_secret"),
        description="verifies that requests come from Slack (HTTP mode)")
    slack_app_token: SecretStr | None = Field(
        None, validation_alias=AliasChoices("SLACK_APP_TOKEN", "slack_app_token"),
        description="xapp-... token (Socket Mode)")
    slack_mode: Literal["http", "socket"] = Field("http", description="HTTP endpoint or Socket Mode")
    slack_api_url: str = Field("https://slack.com/api/", description="Slack Web API base URL (proxies, "
                               "air-gapped gateways)")
    slack_retry_interval: float = Field(10.0, gt=0, le=300, description="seconds between checks of a Slack API "
                                        "that cannot be reached; queued posts go out at the first answer")
    slack_workspace_url: str | None = Field(None, description="no longer read: recurrence notes link earlier "
                                            "threads with Slack's chat.getPermalink; accepted so that config files "
                                            "that set it still load")
    recurrence_days: int = Field(7, ge=0, le=90, description="how far back a new triage looks for incidents it "
                                 "shares a node, GPU, image, workload or verdict with (docs/memory.md); 0: never")
    templates_dir: Path | None = Field(None, description="folder of Jinja templates overriding the message wording")
    drills_dir: Path | None = Field(None, description="saved drills: where 'Save as drill' and `drill save` "
                                    "write recorded incidents, and where drills find them; default "
                                    "<state dir>/drills")
    # Webhook server and persistence.
    capture_alerts: list[str] = Field(default_factory=lambda: ["NCCLJobStalled"],
                                      description="alert names (or shell patterns) whose triage also writes its "
                                      "evidence as a recorded incident into the drills dir, at once")
    webhook_token: SecretStr | None = Field(None, description="bearer token (or basic-auth password) that "
                                            "Alertmanager sends to /alertmanager")
    webhook_max_bytes: int = Field(1_048_576, gt=1024, description="largest accepted webhook body")
    slack_max_bytes: int = Field(1_048_576, gt=1024, description="largest accepted body on /slack/events")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        "INFO", description="log level of the JSON logs")
    database_url: str | None = Field(None, description="SQLAlchemy URL; default a SQLite file in the state dir")
    max_concurrent_triages: int = Field(4, ge=1, le=64, description="triages running at once per process")
    slack_timeout: int = Field(10, ge=1, le=60, description="seconds one Slack Web API call may take")
    outbox_lease: float = Field(30.0, gt=1, le=600, description="seconds a Slack call may take before another "
                                "poster takes it over (longer than slack_timeout)")
    triage_workers: int = Field(1, ge=0, le=32, description="worker processes that run live triages beside the "
                                "serving process; 0 runs them on threads of the serving process")
    triage_lease: float = Field(30.0, ge=1, le=3600, description="seconds a worker holds a triage job between "
                                "heartbeats; a killed worker's job is run again after it")
    watch_cache: bool = Field(True, description="workers keep a watch cache of pods, events, nodes and workloads "
                              "(docs/watch-cache.md)")
    watch_namespaces: list[str] = Field(default_factory=list, description="namespaces the watch cache holds; "
                                        "empty: every namespace")
    # Chat and alerts.
    routes: list[Route] = Field(default_factory=list, description="alert label matchers -> Slack channel")
    default_channel: str | None = Field(None, description="channel for alerts no route matches")
    storm_groups: int = Field(5, ge=0, le=1000, description="alert groups starting in one channel within "
                              "storm_window seconds that are threaded under one roll-up message (0: never)")
    storm_window: float = Field(60.0, gt=0, le=3600, description="seconds in which storm_groups groups make a "
                                "storm")
    permissions: Permissions = Field(default_factory=Permissions,
                                     description="channels and users -> namespaces they may triage")
    # Links and actions on an alert's root message.
    grafana_url_template: str | None = Field(
        None, description="dashboard link on alert messages, e.g. https://grafana/d/abc/pods?var-namespace="
        "{namespace}&var-pod={pod}; {alertname}, {namespace}, {service}, {pod}, {node}, {cluster} are filled in")
    grafana_node_url_template: str | None = Field(
        None, description="dashboard link on a node's alerts (default: grafana_url_template), e.g. "
        "https://grafana/d/xyz/node?var-node={node}; the same names are filled in")
    alertmanager_url: str | None = Field(None, description="Alertmanager's URL, for silence links (default: "
                                         "the externalURL the webhook carries) and the Silence button")
    digest_channels: list[str] = Field(default_factory=list, description="channels sent the weekly digest (Monday, "
                                       "for the week before); `/triage digest on|off` in a channel changes it")
    silence_button: bool = Field(False, description="a 'Silence 1h' button on alert messages that creates the "
                                 "silence through alertmanager_url's v2 API (needs alertmanager_url)")
    # The optional language model (off unless llm_provider is set): narratives, interview grading, /ask answers.
    llm_provider: str | None = Field(None, description="openai (any OpenAI-compatible endpoint, vLLM included), "
                                     "ollama, llamacpp (a local GGUF file), or another init_chat_model provider")
    llm_model: str | None = Field(None, description="model name; for llamacpp the path to the .gguf file")
    llm_base_url: str | None = Field(None, description="endpoint, e.g. http://vllm.ml:8000/v1 or "
                                     "http://ollama:11434")
    llm_api_key: SecretStr | None = Field(None, description="API key of the endpoint, if it needs one")
    llm_timeout: float = Field(30.0, gt=0, le=300, description="seconds a generation may take before the "
                               "deterministic text is used instead")
    llm_max_tokens: int = Field(400, ge=16, le=4096, description="longest generation")
    llm_summaries: bool = Field(True, description="narrate reports and drill debriefs when a model is set")
    llm_grading: bool = Field(False, description="let the model credit interview points the keyword grader "
                              "missed (it must quote the answer)")
    # /ask and `triagebot ask`: retrieval over the playbooks, the Xid catalog, the question bank and the docs.
    ask_retriever: Literal["bm25", "embeddings"] = Field("bm25", description="bm25, or embeddings (the "
                                                         "[semantic] extra)")
    ask_top_k: int = Field(4, ge=1, le=20, description="passages an answer draws on")
    docs_dir: Path | None = Field(None, description="folder of markdown docs /ask searches; default the "
                                  "bundled docs")

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("watch_namespaces")
    @classmethod
    def _namespaces_are_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _NAMESPACE.fullmatch(name):
                raise ValueError(f'"{name}" is not a namespace name (lower-case DNS-1123 label)')
        return value

    @field_validator("agent_url_template")
    @classmethod
    def _template_names_a_node(cls, value: str) -> str:
        if "{node}" not in value and "{node_ip}" not in value:
            raise ValueError("must contain {node} or {node_ip}")
        return value

    @field_validator("flight_recorder_dir")
    @classmethod
    def _plain_folder(cls, value: str | None) -> str | None:
        # A path under /var/log on the node, sent in a URL: plain names only, never `..` or an absolute path.
        value = value.strip("/") if value else value
        if value and (not _FOLDER.fullmatch(value) or ".." in value.split("/")):
            raise ValueError("must be a plain folder under /var/log, e.g. pytorch-fr")
        return value or None

    @field_validator("grafana_url_template", "grafana_node_url_template", "alertmanager_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value

    @model_validator(mode="after")
    def _lease_outlasts_a_call(self) -> Settings:
        # A lease that ends while its call may still be under way lets a second poster send the same message.
        if self.outbox_lease <= self.slack_timeout:
            raise ValueError(f"outbox_lease ({self.outbox_lease:g} s) must be longer than slack_timeout "
                             f"({self.slack_timeout:g} s)")
        return self

    @model_validator(mode="after")
    def _silence_needs_alertmanager(self) -> Settings:
        if self.silence_button and not self.alertmanager_url:
            raise ValueError("silence_button needs alertmanager_url: the button creates silences through its API")
        return self

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = os.environ.get("TRIAGEBOT_CONFIG")
        if path:
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=path))
        return tuple(sources)


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment and TRIAGEBOT_CONFIG; a bad value raises ConfigError naming it."""
    path = os.environ.get("TRIAGEBOT_CONFIG")
    if path and not Path(path).is_file():
        raise ConfigError(f"TRIAGEBOT_CONFIG={path}: no such file")
    try:
        return Settings(**overrides)
    except ValidationError as err:
        first = err.errors()[0]
        if not first["loc"]:  # a rule across settings (a model validator) names its settings in its message
            raise ConfigError(f"settings: {first['msg'].removeprefix('Value error, ')}") from None
        name = ".".join(str(p) for p in first["loc"])
        aliased = name in Settings.model_fields and Settings.model_fields[name].validation_alias is not None
        env = name.upper() if aliased else f"TRIAGEBOT_{name.upper()}"
        raise ConfigError(f"setting {name} ({env}): {first['msg']}") from None
    except SettingsError as err:
        # Raised before validation when a list/mapping setting's variable is not JSON; it names the field in quotes.
        found = re.search(r'field "(\w+)"', str(err))
        name = found.group(1) if found else "?"
        raise ConfigError(f"setting {name} (TRIAGEBOT_{name.upper()}): expected a JSON list or object, as in "
                          'TRIAGEBOT_ROUTES=\'[{"match": {"severity": "critical"}, "channel": "C123"}]\'') from None
