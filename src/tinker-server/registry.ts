import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.js';

/**
 * The training runs and checkpoints `sleuth serve-tinker` has made, in the shapes of the Tinker
 * SDK's TrainingRun, Checkpoint and Cursor: what `RestClient.list_training_runs`,
 * `get_training_run`, `list_checkpoints`, `delete_checkpoint`, `set_checkpoint_ttl_*` and
 * `get_weights_info_by_tinker_path` read. A run outlives its model's unload_model; it lives as
 * long as the server. A checkpoint with a TTL is deleted (file and entry) once it expires.
 */

export type CheckpointType = 'training' | 'sampler';

export interface CheckpointEntry {
  /** `weights/NAME` or `sampler_weights/NAME`, as the SDK's ParsedCheckpointTinkerPath spells it. */
  checkpointId: string;
  type: CheckpointType;
  time: Date;
  tinkerPath: string;
  file: string;
  expiresAt?: Date;
}

export interface RunEntry {
  id: string;
  baseModel: string;
  rank: number;
  owner: string;
  lastRequestTime: Date;
  userMetadata?: Record<string, string>;
  checkpoints: Map<string, CheckpointEntry>;
}

export class RunRegistry {
  private readonly runs = new Map<string, RunEntry>();

  add(run: Omit<RunEntry, 'checkpoints' | 'lastRequestTime'>): RunEntry {
    const entry: RunEntry = { ...run, lastRequestTime: new Date(), checkpoints: new Map() };
    this.runs.set(run.id, entry);
    return entry;
  }

  get(id: string): RunEntry | undefined {
    this.expire();
    return this.runs.get(id);
  }

  touch(id: string): void {
    const r = this.runs.get(id);
    if (r) r.lastRequestTime = new Date();
  }

  /** Record a checkpoint just written (replacing one of the same id). */
  addCheckpoint(runId: string, c: { type: CheckpointType; name: string; file: string; ttlSeconds?: number | null }): CheckpointEntry {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`no training run ${runId}`);
    const checkpointId = `${c.type === 'training' ? 'weights' : 'sampler_weights'}/${c.name}`;
    const entry: CheckpointEntry = { checkpointId, type: c.type, time: new Date(), tinkerPath: `tinker://${runId}/${checkpointId}`, file: c.file };
    if (c.ttlSeconds) entry.expiresAt = new Date(Date.now() + c.ttlSeconds * 1000);
    run.checkpoints.set(checkpointId, entry);
    return entry;
  }

  checkpoint(runId: string, checkpointId: string): CheckpointEntry | undefined {
    return this.get(runId)?.checkpoints.get(checkpointId);
  }

  /** Delete a checkpoint's file and entry; false if there is none. */
  deleteCheckpoint(runId: string, checkpointId: string): boolean {
    const run = this.get(runId);
    const c = run?.checkpoints.get(checkpointId);
    if (!run || !c) return false;
    rmSync(c.file, { force: true });
    run.checkpoints.delete(checkpointId);
    return true;
  }

  /** Set (seconds from now) or clear (null) a checkpoint's expiry. */
  setTtl(c: CheckpointEntry, ttlSeconds: number | null): void {
    if (ttlSeconds === null) delete c.expiresAt;
    else c.expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  }

  list(): RunEntry[] {
    this.expire();
    return [...this.runs.values()].sort((a, b) => b.lastRequestTime.getTime() - a.lastRequestTime.getTime());
  }

  /** Drop checkpoints past their expiry (their files too: this server wrote them). */
  expire(now = Date.now()): void {
    for (const run of this.runs.values()) {
      for (const [id, c] of run.checkpoints) {
        if (c.expiresAt && c.expiresAt.getTime() <= now) {
          rmSync(c.file, { force: true });
          run.checkpoints.delete(id);
        }
      }
    }
  }
}

/** A checkpoint in the SDK's Checkpoint shape. */
export function checkpointJson(c: CheckpointEntry): Record<string, unknown> {
  return {
    checkpoint_id: c.checkpointId,
    checkpoint_type: c.type,
    time: c.time.toISOString(),
    tinker_path: c.tinkerPath,
    size_bytes: existsSync(c.file) ? statSync(c.file).size : null,
    public: false,
    expires_at: c.expiresAt?.toISOString() ?? null,
  };
}

/** A run in the SDK's TrainingRun shape. */
export function runJson(r: RunEntry): Record<string, unknown> {
  const latest = (type: CheckpointType) => {
    const all = [...r.checkpoints.values()].filter((c) => c.type === type);
    const last = all.sort((a, b) => b.time.getTime() - a.time.getTime())[0];
    return last ? checkpointJson(last) : null;
  };
  return {
    training_run_id: r.id,
    base_model: r.baseModel,
    model_owner: r.owner,
    is_lora: true,
    corrupted: false,
    lora_rank: r.rank,
    last_request_time: r.lastRequestTime.toISOString(),
    last_checkpoint: latest('training'),
    last_sampler_checkpoint: latest('sampler'),
    user_metadata: r.userMetadata ?? null,
  };
}

/** `tinker://MODEL/weights/NAME`, `tinker://MODEL/sampler_weights/NAME` or SkyRL's `tinker://MODEL/NAME`. */
export function parsePath(path: string): { modelId: string; kind: 'weights' | 'sampler_weights' | 'plain'; name: string } | undefined {
  const m = /^tinker:\/\/([^/]+)\/(?:(weights|sampler_weights)\/)?([A-Za-z0-9_-]+)$/.exec(path);
  if (!m) return undefined;
  return { modelId: m[1]!, kind: (m[2] as 'weights' | 'sampler_weights' | undefined) ?? 'plain', name: m[3]! };
}

/** A model's folder under the server's directory: its id with anything but [A-Za-z0-9_-] replaced. */
export function modelDir(dir: string, modelId: string): string {
  return join(dir, modelId.replace(/[^A-Za-z0-9_-]/g, '_'));
}

/** The file a checkpoint path names under `dir`: a training state, or sampler weights (either path form). */
export function checkpointFile(dir: string, path: string, kind: 'state' | 'sampler'): string {
  const p = parsePath(path);
  if (!p || (kind === 'state' && p.kind !== 'weights') || (kind === 'sampler' && p.kind === 'weights')) throw new InputError(`'${path}' is not a ${kind === 'state' ? 'tinker://MODEL/weights/NAME' : 'tinker://MODEL/sampler_weights/NAME'} path`);
  const file = join(modelDir(dir, p.modelId), `${p.name}.${kind}.ckpt`);
  if (!existsSync(file)) throw new InputError(`'${path}': no such checkpoint on this server`);
  return file;
}
