"""Numbered schema migrations. Append new ones; never edit an applied one."""
from __future__ import annotations

from workbench.store.connection import Database

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "skills, filter verdicts, curation events, ingest runs",
        """
        CREATE TABLE skills (
            id VARCHAR PRIMARY KEY,            -- content hash of the package
            skill_key VARCHAR NOT NULL,        -- identity across versions (source locator)
            version INTEGER NOT NULL,
            is_current BOOLEAN NOT NULL,
            name VARCHAR NOT NULL,
            description VARCHAR NOT NULL,
            category VARCHAR NOT NULL,
            category_inferred BOOLEAN NOT NULL,
            steps VARCHAR[] NOT NULL,
            tools VARCHAR[] NOT NULL,
            bins VARCHAR[] NOT NULL,
            env_vars VARCHAR[] NOT NULL,
            inputs VARCHAR[] NOT NULL,
            outputs VARCHAR[] NOT NULL,
            os VARCHAR[] NOT NULL,
            license VARCHAR,
            skill_version VARCHAR,
            source_kind VARCHAR NOT NULL,      -- folder | jsonl
            source_path VARCHAR NOT NULL,
            source_ref VARCHAR,                -- git commit when ingested from a checkout
            package_files VARCHAR[] NOT NULL,
            front_matter JSON NOT NULL,
            raw_text VARCHAR NOT NULL,
            ingest_run_id VARCHAR NOT NULL,
            ingested_at TIMESTAMP NOT NULL
        );
        CREATE INDEX skills_key ON skills(skill_key);
        CREATE TABLE filter_verdicts (
            skill_id VARCHAR NOT NULL,
            rule VARCHAR NOT NULL,
            outcome VARCHAR NOT NULL,          -- pass | warn | fail
            evidence VARCHAR NOT NULL,
            location VARCHAR,
            filter_run_id VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL,
            PRIMARY KEY (skill_id, rule)
        );
        CREATE TABLE curation_events (
            event_id VARCHAR PRIMARY KEY,
            batch_id VARCHAR NOT NULL,
            skill_id VARCHAR NOT NULL,
            field VARCHAR NOT NULL,
            old_value VARCHAR,                  -- override before (NULL: none)
            new_value VARCHAR,                  -- override after (NULL: removed)
            old_effective VARCHAR,              -- what the user saw before the change
            author VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL,
            undoes_batch VARCHAR                -- set on events written by an undo
        );
        CREATE TABLE skill_overrides (
            skill_id VARCHAR NOT NULL,
            field VARCHAR NOT NULL,
            value VARCHAR NOT NULL,
            event_id VARCHAR NOT NULL,
            PRIMARY KEY (skill_id, field)
        );
        CREATE TABLE ingest_runs (
            run_id VARCHAR PRIMARY KEY,
            started_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP,
            paths JSON NOT NULL,
            found INTEGER DEFAULT 0,
            new_skills INTEGER DEFAULT 0,
            new_versions INTEGER DEFAULT 0,
            unchanged INTEGER DEFAULT 0,
            errors INTEGER DEFAULT 0
        );
        CREATE TABLE ingest_errors (
            run_id VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            file VARCHAR NOT NULL,
            reason VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL
        );
        CREATE VIEW skill_auto_status AS
            SELECT s.id,
                   CASE WHEN count(v.rule) = 0 THEN 'pending'
                        WHEN bool_or(v.outcome = 'fail') THEN 'rejected'
                        WHEN bool_or(v.outcome = 'warn') THEN 'pending'
                        ELSE 'accepted' END AS auto_status,
                   list(v.rule ORDER BY v.rule) FILTER (WHERE v.outcome <> 'pass') AS flagged_rules
            FROM skills s LEFT JOIN filter_verdicts v ON v.skill_id = s.id
            GROUP BY s.id;
        CREATE VIEW skills_effective AS
            SELECT s.* REPLACE (
                       coalesce(o_name.value, s.name) AS name,
                       coalesce(o_cat.value, s.category) AS category,
                       coalesce(o_desc.value, s.description) AS description),
                   coalesce(o_status.value, a.auto_status) AS status,
                   a.auto_status,
                   coalesce(a.flagged_rules, []) AS flagged_rules,
                   (o_status.value IS NOT NULL OR o_cat.value IS NOT NULL
                    OR o_desc.value IS NOT NULL OR o_name.value IS NOT NULL) AS curated
            FROM skills s
            JOIN skill_auto_status a ON a.id = s.id
            LEFT JOIN skill_overrides o_status ON o_status.skill_id = s.id AND o_status.field = 'status'
            LEFT JOIN skill_overrides o_cat ON o_cat.skill_id = s.id AND o_cat.field = 'category'
            LEFT JOIN skill_overrides o_desc ON o_desc.skill_id = s.id AND o_desc.field = 'description'
            LEFT JOIN skill_overrides o_name ON o_name.skill_id = s.id AND o_name.field = 'name';
        """,
    ),
    (
        2,
        "LLM call log, inferred scenarios and inference failures",
        """
        CREATE TABLE llm_calls (
            call_id VARCHAR PRIMARY KEY,
            batch_id VARCHAR,
            stage VARCHAR NOT NULL,
            item VARCHAR,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            attempt INTEGER NOT NULL,
            latency_ms DOUBLE NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            cost_usd DOUBLE NOT NULL,
            cache_hit BOOLEAN NOT NULL,
            error_class VARCHAR,
            template_version VARCHAR,
            created_at TIMESTAMP NOT NULL
        );
        CREATE TABLE scenarios (
            skill_id VARCHAR NOT NULL,
            role VARCHAR NOT NULL,              -- pre | post
            goal VARCHAR NOT NULL,
            context VARCHAR NOT NULL,
            capability VARCHAR NOT NULL,
            state VARCHAR NOT NULL,
            io_tool VARCHAR NOT NULL,
            canonical VARCHAR NOT NULL,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            template_version VARCHAR,
            created_at TIMESTAMP NOT NULL,
            PRIMARY KEY (skill_id, role)
        );
        CREATE TABLE scenario_failures (
            skill_id VARCHAR PRIMARY KEY,
            reason VARCHAR NOT NULL,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL
        );
        """,
    ),
    (
        3,
        "scenario graph: clusters, constraints, projections, bridges, builds, paths, visit counts",
        """
        CREATE TABLE clusters (
            cluster_id INTEGER PRIMARY KEY,
            anchor VARCHAR NOT NULL,            -- medoid scenario id: the cluster's identity across builds
            canonical VARCHAR NOT NULL,
            size INTEGER NOT NULL,
            renamed BOOLEAN NOT NULL,
            build_id VARCHAR NOT NULL
        );
        CREATE TABLE cluster_members (
            scenario_id VARCHAR PRIMARY KEY,    -- skill_id || ':' || role
            skill_id VARCHAR NOT NULL,
            role VARCHAR NOT NULL,
            cluster_id INTEGER NOT NULL,
            text VARCHAR NOT NULL
        );
        CREATE TABLE cluster_edits (
            edit_id VARCHAR PRIMARY KEY,
            kind VARCHAR NOT NULL,              -- merge | split | rename
            payload JSON NOT NULL,              -- scenario ids (and text for rename)
            author VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL,
            undone_at TIMESTAMP
        );
        CREATE TABLE projections (
            scenario_id VARCHAR PRIMARY KEY,
            x DOUBLE NOT NULL,
            y DOUBLE NOT NULL,
            topic INTEGER NOT NULL,
            build_id VARCHAR NOT NULL
        );
        CREATE TABLE bridges (
            post_scenario VARCHAR NOT NULL,
            pre_scenario VARCHAR NOT NULL,
            from_skill VARCHAR NOT NULL,
            to_skill VARCHAR NOT NULL,
            similarity DOUBLE NOT NULL,
            verdict VARCHAR NOT NULL,           -- verified | rejected
            reason VARCHAR NOT NULL,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            texts_hash VARCHAR NOT NULL,        -- both scenario texts: a verdict is reused while they stand
            created_at TIMESTAMP NOT NULL,
            PRIMARY KEY (post_scenario, pre_scenario)
        );
        CREATE TABLE graph_builds (
            build_id VARCHAR PRIMARY KEY,
            started_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP,
            embedder VARCHAR NOT NULL,
            threshold DOUBLE NOT NULL,
            inputs_hash VARCHAR NOT NULL,       -- texts + edits + threshold: unchanged means dedup is reused
            stats JSON
        );
        CREATE TABLE sample_batches (
            batch_id VARCHAR PRIMARY KEY,
            sampler VARCHAR NOT NULL,
            n_paths INTEGER NOT NULL,
            seed BIGINT NOT NULL,
            min_len INTEGER NOT NULL,
            max_len INTEGER NOT NULL,
            build_id VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL
        );
        CREATE TABLE paths (
            path_id VARCHAR PRIMARY KEY,
            batch_id VARCHAR NOT NULL,
            idx INTEGER NOT NULL,
            length INTEGER NOT NULL
        );
        CREATE TABLE path_steps (
            path_id VARCHAR NOT NULL,
            step INTEGER NOT NULL,
            src_anchor VARCHAR NOT NULL,
            skill_id VARCHAR NOT NULL,
            dst_anchor VARCHAR NOT NULL,
            PRIMARY KEY (path_id, step)
        );
        CREATE TABLE visit_counts (
            kind VARCHAR NOT NULL,              -- node (cluster anchor) | skill
            key VARCHAR NOT NULL,
            count BIGINT NOT NULL,
            PRIMARY KEY (kind, key)
        );
        """,
    ),
    (
        4,
        "synthesis: runs, tasks, the tasks of each run, verification checks",
        """
        CREATE TABLE synth_runs (
            run_id VARCHAR PRIMARY KEY,
            sampler VARCHAR NOT NULL,
            n_paths INTEGER NOT NULL,
            seed BIGINT NOT NULL,
            provider VARCHAR NOT NULL,          -- offline | llm
            concurrency INTEGER NOT NULL,
            batch_id VARCHAR,                   -- the sample batch its paths came from
            status VARCHAR NOT NULL,            -- running | finished | cancelled | failed
            pid INTEGER,
            message VARCHAR,
            created_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP
        );
        CREATE TABLE tasks (
            task_id VARCHAR PRIMARY KEY,        -- hash of (path steps, seed, synthesizer version)
            name VARCHAR NOT NULL,              -- org/name as in task.toml
            path_id VARCHAR NOT NULL,           -- the path it was first made from
            category VARCHAR NOT NULL,
            difficulty VARCHAR NOT NULL,
            n_steps INTEGER NOT NULL,
            recipes VARCHAR[] NOT NULL,
            skill_ids VARCHAR[] NOT NULL,
            scenario_ids VARCHAR[] NOT NULL,
            provider VARCHAR NOT NULL,
            bundle_dir VARCHAR NOT NULL,        -- relative to the workspace
            bundle_hash VARCHAR NOT NULL,
            image VARCHAR,
            verdict VARCHAR NOT NULL,           -- pending | accepted | rejected
            failed_check VARCHAR,
            reason VARCHAR,
            created_at TIMESTAMP NOT NULL,
            verified_at TIMESTAMP
        );
        CREATE TABLE run_tasks (
            run_id VARCHAR NOT NULL,
            path_id VARCHAR NOT NULL,
            task_id VARCHAR,                    -- NULL when synthesis itself failed
            stage VARCHAR NOT NULL,             -- sampled | synthesized | verified | failed
            error VARCHAR,
            PRIMARY KEY (run_id, path_id)
        );
        CREATE TABLE task_checks (
            task_id VARCHAR NOT NULL,
            check_name VARCHAR NOT NULL,        -- build | noop | oracle | rubric | decontam
            passed BOOLEAN NOT NULL,
            reason VARCHAR NOT NULL,
            seconds DOUBLE NOT NULL,
            log VARCHAR NOT NULL,
            details JSON NOT NULL,              -- e.g. per-test outcomes
            created_at TIMESTAMP NOT NULL,
            PRIMARY KEY (task_id, check_name)
        );
        """,
    ),
    (
        5,
        "synthesis: near-duplicate key per task, path lengths per run",
        """
        -- same recipe chain and same step text (numbers aside) -> same key; see compose.near_duplicate_key
        ALTER TABLE tasks ADD COLUMN near_dup_key VARCHAR;
        ALTER TABLE synth_runs ADD COLUMN min_len INTEGER;
        ALTER TABLE synth_runs ADD COLUMN max_len INTEGER;
        """,
    ),
    (
        6,
        "synthesis: which skill each step of a task serves and what of it the step uses",
        """
        -- a JSON list, one object per composed step: step, skill_id, skill_name, recipe, tools_used,
        -- kinds_used, fidelity (tool | artifact | category-only); NULL for tasks made before
        ALTER TABLE tasks ADD COLUMN skill_fidelity JSON;
        """,
    ),
    (
        7,
        "synthesis: every repair attempt of a task, and a task's repair count and LLM cost",
        """
        -- one row per repair attempt (pipeline/repair/attempts.RepairAttempt), replaced whole per task
        CREATE TABLE task_attempts (
            task_id VARCHAR NOT NULL,
            n INTEGER NOT NULL,                 -- 1-based, in the order the attempts were made
            artifact VARCHAR NOT NULL,          -- environment | solution | tests | instruction
            check_name VARCHAR NOT NULL,        -- the check (or guard) whose failure asked for it
            reason VARCHAR NOT NULL,
            diff VARCHAR NOT NULL,              -- unified diff of the artifact, old -> new
            evidence JSON NOT NULL,             -- log excerpt lines, failing tests
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            cost_usd DOUBLE NOT NULL,
            outcome VARCHAR NOT NULL,           -- fixed | still_failing | moved_on | exhausted | pending
            created_at TIMESTAMP NOT NULL,
            PRIMARY KEY (task_id, n)
        );
        ALTER TABLE tasks ADD COLUMN repairs INTEGER;      -- attempts made; NULL: none recorded
        ALTER TABLE tasks ADD COLUMN cost_usd DOUBLE;      -- sum of llm_calls.cost_usd with item = task_id
        """,
    ),
    (
        8,
        "rollouts: batches, one row per rollout and per test outcome, trajectory judgements, task events",
        """
        CREATE TABLE rollout_runs (
            run_id VARCHAR PRIMARY KEY,
            agent VARCHAR NOT NULL,             -- nop | oracle | ablation | terminus-2 | harbor:<agent>
            model VARCHAR,
            k INTEGER NOT NULL,                 -- rollouts per task
            concurrency INTEGER NOT NULL,
            n_tasks INTEGER NOT NULL,
            params JSON NOT NULL,               -- what the batch was started with (temperature, task selection)
            status VARCHAR NOT NULL,            -- pending | running | done | cancelled | failed
            pid INTEGER,
            message VARCHAR,
            created_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP
        );
        CREATE TABLE rollouts (
            rollout_id VARCHAR PRIMARY KEY,     -- content key: bundle hash + agent config + sample
            run_id VARCHAR,
            task_id VARCHAR NOT NULL,
            agent VARCHAR NOT NULL,
            agent_label VARCHAR NOT NULL,       -- what pages show (ablation says it is a probe)
            model VARCHAR,
            sample INTEGER NOT NULL,
            temperature DOUBLE NOT NULL,
            source VARCHAR NOT NULL,            -- workbench | harbor
            reward DOUBLE,
            passed BOOLEAN NOT NULL,
            failure_class VARCHAR,              -- NULL when passed; timeout | never_completed | parse_errors | ...
            n_tests INTEGER NOT NULL,
            n_failed INTEGER NOT NULL,
            turns INTEGER NOT NULL,
            parse_errors INTEGER NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            cost_usd DOUBLE NOT NULL,
            agent_s DOUBLE NOT NULL,
            verifier_s DOUBLE NOT NULL,
            total_s DOUBLE NOT NULL,
            overhead_ms_per_turn DOUBLE,
            folder VARCHAR NOT NULL,            -- runs/<run_id>/rollouts/<rollout_id>, relative to the workspace
            error VARCHAR,
            details JSON NOT NULL,
            created_at TIMESTAMP NOT NULL
        );
        CREATE TABLE rollout_tests (
            rollout_id VARCHAR NOT NULL,
            test_name VARCHAR NOT NULL,
            outcome VARCHAR NOT NULL,           -- passed | failed | error | skipped
            message VARCHAR,
            PRIMARY KEY (rollout_id, test_name)
        );
        -- SETA's trajectory judge: tasks no rollout solved (pass rate 0 over >= 3 rollouts)
        CREATE TABLE trajectory_judgements (
            task_id VARCHAR NOT NULL,
            judged_at TIMESTAMP NOT NULL,
            verdict VARCHAR NOT NULL,           -- too_hard | design_flaw
            reason VARCHAR NOT NULL,
            evidence JSON NOT NULL,             -- consistent / sporadic failing tests, quotes
            n_rollouts INTEGER NOT NULL,
            model VARCHAR,
            cost_usd DOUBLE NOT NULL,
            PRIMARY KEY (task_id, judged_at)
        );
        -- Changes to the accepted set that can be undone: a design flaw withdraws a task, a user restores it
        CREATE TABLE task_events (
            task_id VARCHAR NOT NULL,
            event_at TIMESTAMP NOT NULL,
            event VARCHAR NOT NULL,             -- withdrawn | restored
            source VARCHAR NOT NULL,            -- trajectory_judge | user
            reason VARCHAR NOT NULL,
            PRIMARY KEY (task_id, event_at)
        );
        ALTER TABLE tasks ADD COLUMN withdrawn BOOLEAN DEFAULT false;   -- the latest task_events row says withdrawn
        """,
    ),
    (
        9,
        "difficulty evolution: evolve runs and the lineage of every variant",
        """
        CREATE TABLE evolve_runs (
            run_id VARCHAR PRIMARY KEY,
            rounds INTEGER NOT NULL,            -- asked for
            rounds_done INTEGER NOT NULL,
            agent VARCHAR NOT NULL,             -- whose pass rates drive the operators (e.g. noisy-oracle)
            model VARCHAR,
            k INTEGER NOT NULL,                 -- rollouts per variant
            params JSON NOT NULL,               -- task selection, executor, p of noisy-oracle, ...
            status VARCHAR NOT NULL,            -- pending | running | done | cancelled | failed
            pid INTEGER,
            message VARCHAR,
            created_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP
        );
        -- One row per variant a round tried to make (made or not): its parent, the operator the
        -- parent's pass rate chose, and what became of it.
        CREATE TABLE task_lineage (
            task_id VARCHAR PRIMARY KEY,        -- <parent>__d1 | __b1 | __e1 (pipeline/evolve/models.py)
            parent_id VARCHAR NOT NULL,
            root_id VARCHAR NOT NULL,
            operator VARCHAR NOT NULL,          -- harder | context_switch | easier
            round INTEGER NOT NULL,             -- 1-based round of its evolve run
            run_id VARCHAR NOT NULL,            -- evolve_runs.run_id
            parent_pass_rate DOUBLE NOT NULL,
            parent_rollouts INTEGER NOT NULL,
            provider VARCHAR NOT NULL,          -- offline | llm
            change VARCHAR NOT NULL,            -- what the operator changed, in a line
            status VARCHAR NOT NULL,            -- made | no_variant | failed
            error VARCHAR,
            created_at TIMESTAMP NOT NULL
        );
        """,
    ),
    (
        10,
        "verifier strength per task: each solution command left out once (issue 27.3)",
        """
        CREATE TABLE task_strength (
            task_id VARCHAR NOT NULL,
            bundle_hash VARCHAR NOT NULL,       -- the bundle measured: a changed task is measured again
            measured_at TIMESTAMP NOT NULL,
            strength DOUBLE,                    -- caught / effective commands; NULL: nothing to catch or no reference
            effective INTEGER NOT NULL,
            caught INTEGER NOT NULL,
            report JSON NOT NULL,               -- pipeline.verify.strength.StrengthReport.as_dict()
            PRIMARY KEY (task_id, bundle_hash)
        );
        """,
    ),
]

LATEST_VERSION = MIGRATIONS[-1][0]


def current_version(db: Database) -> int:
    if not db.path.exists():
        return 0
    with db.read() as con:
        has = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
        ).fetchone()[0]
        if not has:
            return 0
        return con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0]


def migrate(db: Database) -> list[int]:
    """Apply every migration newer than the file's version; returns those applied."""
    if current_version(db) >= LATEST_VERSION:
        return []
    applied: list[int] = []
    with db.write() as con:
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER PRIMARY KEY, description VARCHAR, applied_at TIMESTAMP DEFAULT now())"
        )
        have = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0]
        for version, description, sql in MIGRATIONS:
            if version <= have:
                continue
            con.execute(sql)
            con.execute(
                "INSERT INTO schema_version (version, description) VALUES (?, ?)",
                [version, description],
            )
            applied.append(version)
    return applied
