"""Job folders in Harbor's layout (harbor 0.26): atomic JSON, secret scrubbing, resume, summaries.

Layout of one job (``<out>/<job>/``)::

    config.json          what was run (task, options, policy, wrappers, seeds, orchestrator)
    result.json          Harbor JobResult: id, started_at, finished_at, n_total_trials, stats{...}
    summary.json         ours: mean score with a 95 % bootstrap interval, wins, steps, latency, cost
    <task>__<seed>/      one trial per episode
        config.json      Harbor TrialConfig-like: task{name, options, seed}, trial_name, agent{...}
        result.json      Harbor TrialResult: task_name, trial_name, agent_info, agent_result,
                         verifier_result.rewards.reward, exception_info, started_at, finished_at
        agent/episode.json   every tick: observation, candidates, probabilities, move, latency, tokens
                             (compact: each distinct text and list once; read it with read_episode)
        agent/frames/        with ``--frames``: NNNN.png, the env's screenshot before tick NNNN and
                             after the last one (tasks with ``env.screenshot()``, e.g. the web tasks)

A trial is finished exactly when its ``result.json`` exists: it is written last
and atomically (temp file + ``os.replace``), so a killed run leaves either a
complete trial or one that ``--resume`` plays again, never half-written JSON.
Counts are always taken from the trials on disk (the job's ``result.json`` is
rewritten from them on resume and at the end; readers such as ``s1 table`` read
the trials, not that file). Files get the permissions the umask allows.
Only the driver process writes files (:class:`JobFolder`); workers (processes
or Ray tasks) return plain dicts (:func:`trial_files`), so a Ray cluster
without a shared file system works too.
"""

from s1gym.jobs import files
from s1gym.jobs.episodes import EPISODE_FORMAT, compact_episode, expand_episode, frame_path, read_episode
from s1gym.jobs.files import *  # noqa: F403 (all of the file helpers: ``__all__ += files.__all__``)
from s1gym.jobs.folder import (
    JobFolder,
    JobFolderError,
    JobWriteError,
    find_jobs,
    is_job_dir,
    iter_job_trials,
    load_trials,
    summary_digest,
)
from s1gym.jobs.harbor import (
    eval_key,
    exception_record,
    job_result,
    seed_of,
    seed_record,
    trial_files,
    trial_metadata,
    trial_name,
    trial_reward,
)
from s1gym.jobs.remote import Mirror, RemoteJobsError, is_remote
from s1gym.jobs.summary import OUTCOMES, summarize_trials, trial_outcome, trial_verdict

__all__ = [
    "EPISODE_FORMAT",
    "Mirror",
    "OUTCOMES",
    "RemoteJobsError",
    "JobFolder",
    "JobFolderError",
    "JobWriteError",
    "compact_episode",
    "eval_key",
    "exception_record",
    "expand_episode",
    "find_jobs",
    "frame_path",
    "is_job_dir",
    "is_remote",
    "iter_job_trials",
    "job_result",
    "load_trials",
    "summary_digest",
    "read_episode",
    "seed_of",
    "seed_record",
    "summarize_trials",
    "trial_files",
    "trial_metadata",
    "trial_name",
    "trial_outcome",
    "trial_reward",
    "trial_verdict",
]
__all__ += files.__all__
