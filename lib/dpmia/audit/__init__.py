"""Empirical audits with valid confidence: shadow-model attacks (loss threshold and LiRA) on DP-SGD models,
one-run audits (Steinke et al. 2023), and audits of a user's own model's scores.

Every interval and lower bound states its level, and a level is the *joint* level of everything reported
together: :func:`audit_scores`' ``level`` covers its ε lower bound and all its TPR and FPR intervals,
:func:`lira_audit`'s every interval and bound of both attacks.

* :func:`audit_scores` — scores, 0/1 memberships and (for shadow models) the model of each score: ROC, TPR and
  FPR at chosen FPRs with intervals (clustered by model), and an ε lower bound;
* :func:`one_run_epsilon`, :func:`one_run_p_value` — Steinke, Nasr and Jagielski's one-run audit;
* :func:`one_run_audit` — one DP-SGD training run on digits with many canaries, and its one-run bound;
* :func:`lira_audit` — the shadow-model audit of chapter 7 (joblib ``n_jobs``, shards: :func:`shard_lines`,
  :func:`merge_records`, :func:`analyse`);
* :func:`proportion_interval`, :func:`split_level` — the intervals and the union bound underneath.
"""

from ._intervals import proportion_interval, split_level
from ._lira import AttackOutcome, LiraAudit, analyse, epsilon_lower_bound, lira_audit
from ._onerun import one_run_epsilon, one_run_p_value
from ._onerunaudit import OneRunAudit, one_run_audit
from ._scores import ONE_RUN_FRACTIONS, FprRow, ScoreAudit, audit_scores
from ._shards import AuditSetting, logit_confidence, merge_records, shard_lines, train_records

__all__ = ["audit_scores", "ScoreAudit", "FprRow", "ONE_RUN_FRACTIONS", "one_run_epsilon", "one_run_p_value",
           "one_run_audit", "OneRunAudit", "lira_audit", "LiraAudit", "AttackOutcome", "analyse",
           "epsilon_lower_bound", "logit_confidence", "AuditSetting", "train_records", "shard_lines",
           "merge_records", "proportion_interval", "split_level"]
