//! The `TraceWorkloads` iterator: each row drafted by its format's adapter (native, Alibaba
//! openb, Philly, Alibaba DLRM), mapped (constant, column, seeded random draw) and made a
//! `Workload`.

use std::borrow::Cow;
use std::sync::Arc;

use kueuesim_model::names::{NameRule, from_trace};

use kueuesim_model::limits;
use kueuesim_model::{
    GangSpec, Labels, PodSet, QueueRef, ResourceId, ResourceList, SimDuration, SimTime, Workload,
    resource_amount,
};

use super::cells::{decimal, int_cell, native_time, opt_seconds, philly_time, seconds};
use super::csv::{Row, cell_error};
use super::open::{check_value, topology};
use super::{
    Attr, Columns, GPU_MODEL_LABEL, GpuSharing, GpuSpec, Rows, Source, TraceFormat, TraceWorkloads,
};
use crate::error::ScenarioError;

/// The longest name a trace cell maps to as a namespace or a LocalQueue: a namespace is a
/// DNS-1123 label (63), and a LocalQueue's name is also the value of Kueue's queue-name label
/// on the job (a label value, 63).
pub(crate) const QUEUE_NAME_MAX: usize = 63;

/// The longest name a workload, owner or node may have: a DNS-1123 subdomain.
pub(crate) const NAME_MAX: usize = kueuesim_model::names::DNS1123_SUBDOMAIN_MAX;

/// The name a trace cell stands for, as `from_trace` maps it (docs/traces.md, "Names"),
/// in at most `max` bytes of a DNS-1123 subdomain.
pub(crate) fn trace_name(raw: &str, max: usize) -> Cow<'_, str> {
    from_trace(raw, NameRule::Dns1123Subdomain, max)
}

/// The LocalQueue (and ClusterQueue) name a trace cell stands for: Philly's virtual
/// clusters, a queue column.
pub(crate) fn queue_name(raw: &str) -> Cow<'_, str> {
    from_trace(raw, NameRule::Dns1123Subdomain, QUEUE_NAME_MAX)
}

/// splitmix64: the per-row random draw of a mapping, from (seed, stream, row) only, so a
/// draw never depends on other draws or on the order rows are read.
pub(super) fn draw(seed: u64, stream: u64, row: u64) -> u64 {
    let mut z =
        seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03) ^ row.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
    }
    z
}

/// A 64-bit FNV-1a hash fed in pieces: a trace pod set's `spec_shape`.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, bytes: &[u8]) -> &mut Fnv {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    /// The integer's decimal text, as `Display` writes it.
    fn int(&mut self, v: i64) -> &mut Fnv {
        if v < 0 {
            self.bytes(b"-");
        }
        self.bytes(kueuesim_model::decimal_digits(v.unsigned_abs(), &mut [0; 20]).as_bytes())
    }
}

/// One pod set of a row before it becomes a `PodSet`.
struct Shape {
    name: &'static str,
    count: u32,
    requests: Vec<(ResourceId, i64)>,
    node_selector: Vec<(String, String)>,
}

/// A row's workload before mappings and names are applied.
struct Draft {
    name: String,
    owner_kind: &'static str,
    owner: String,
    arrival_ms: i64,
    duration_ms: Option<i64>,
    shapes: Vec<Shape>,
    min_member: Option<u32>,
}

impl TraceWorkloads {
    /// An openb row's cpu request (millicores) and GPU demand.
    pub(super) fn openb_shape(
        &self,
        row: &Row,
    ) -> Result<(i64, Option<kueuesim_model::gpu::GpuDemand>), ScenarioError> {
        let f = &self.file;
        let Columns::Openb {
            cpu,
            gpu,
            gpu_milli,
            ..
        } = &self.cols
        else {
            return Ok((0, None));
        };
        let cpu_milli = int_cell(f, row, *cpu, "cpu_milli", 1 << 40)? as i64;
        let gpus = int_cell(f, row, *gpu, "num_gpu", 1 << 20)? as i64;
        let milli = match gpu_milli {
            Some(i) if !row.cell(*i).is_empty() => int_cell(f, row, *i, "gpu_milli", 1000)? as i64,
            _ => 0,
        };
        // As the requests are made: a share only for a one-GPU pod asking less than 1000.
        let share = if gpus == 1 && milli > 0 && milli < 1000 {
            milli
        } else {
            gpus * 1000
        };
        Ok((cpu_milli, kueuesim_model::gpu::GpuDemand::of(0, share)))
    }

    /// A row's arrival, in ms from the trace's time 0.
    pub(super) fn arrival_ms(&self, row: &Row) -> Result<i64, ScenarioError> {
        let f = &self.file;
        if self.inflated {
            return Ok(row.index as i64 * 1000);
        }
        match &self.cols {
            Columns::Native { arrival, .. } => native_time(f, row, *arrival, "arrival"),
            Columns::Openb { creation, .. } => {
                Ok(opt_seconds(f, row, *creation, "creation_time")?.unwrap_or(0))
            }
            Columns::Philly {
                timestamp, zero_ms, ..
            } => Ok(philly_time(f, row, *timestamp)? - zero_ms),
            Columns::Dlrm { creation, .. } => {
                Ok(opt_seconds(f, row, Some(*creation), "creation_time")?.unwrap_or(0))
            }
        }
    }

    /// The native format's rule that rows come in arrival order (the other formats are
    /// sorted when opened): `row`, arriving at `arrival_ms`, against the row before it.
    fn check_order(&mut self, row: &Row, arrival_ms: i64) -> Result<(), ScenarioError> {
        let Columns::Native { arrival, .. } = &self.cols else {
            return Ok(());
        };
        if let Some((prev, line)) = self.last
            && arrival_ms < prev
        {
            return Err(cell_error(
                &self.file,
                row,
                *arrival,
                format!(
                    "arrival {:?} is before the previous row's (line {line}): expected the native format's rows in arrival order",
                    row.cell(*arrival)
                ),
            ));
        }
        self.last = Some((arrival_ms, row.line));
        Ok(())
    }

    /// A reader of the same trace from its first row: sorted rows are shared, a streamed
    /// file is opened again (`resample: days` reads the input once per day it draws).
    pub(crate) fn rewound(&self) -> Result<TraceWorkloads, ScenarioError> {
        Ok(TraceWorkloads {
            file: self.file.clone(),
            path: self.path.clone(),
            format: self.format,
            rows: match &self.rows {
                Rows::Stream(_) => Rows::Stream(super::root::open_csv(&self.path)?),
                Rows::Sorted { rows, .. } => Rows::Sorted {
                    rows: std::rc::Rc::clone(rows),
                    at: 0,
                },
            },
            cols: self.cols.clone(),
            sources: self.sources.clone(),
            names: self.names.clone(),
            seed: self.seed,
            stream: self.stream,
            limit: self.limit,
            produced: 0,
            name_prefix: self.name_prefix.clone(),
            trace_name: self.trace_name.clone(),
            last: None,
            gpu_sharing: self.gpu_sharing,
            gpu_spec: self.gpu_spec,
            cpu: self.cpu,
            memory: self.memory,
            gpu: self.gpu,
            gpu_milli: self.gpu_milli,
            default_gang: Arc::clone(&self.default_gang),
            inflated: self.inflated,
        })
    }

    /// The first workload arriving at `t` ms or later: the rows before it are read for
    /// their arrival alone (checked as `next` checks it), not built.
    pub(crate) fn first_from(&mut self, t: i64) -> Option<Result<Workload, ScenarioError>> {
        loop {
            let next = match self.take_row()? {
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            let row = match &next {
                NextRow::Shared(rows, i) => &rows[*i],
                NextRow::Read(row) => row,
            };
            let arrival = match self.arrival_ms(row) {
                Ok(a) => a,
                Err(e) => return Some(Err(e)),
            };
            if arrival >= t {
                return Some(self.workload(row));
            }
            if let Err(e) = self.check_order(row, arrival) {
                return Some(Err(e));
            }
        }
    }

    /// The next row, counted against `limit`.
    fn take_row(&mut self) -> Option<Result<NextRow, ScenarioError>> {
        if self.limit.is_some_and(|l| self.produced >= l) {
            return None;
        }
        let next = match &mut self.rows {
            Rows::Stream(r) => match r.next_row()? {
                Ok(row) => NextRow::Read(row),
                Err(e) => return Some(Err(e)),
            },
            Rows::Sorted { rows, at } => {
                if *at >= rows.len() {
                    return None;
                }
                *at += 1;
                NextRow::Shared(std::rc::Rc::clone(rows), *at - 1)
            }
        };
        self.produced += 1;
        Some(Ok(next))
    }

    fn draft(&mut self, row: &Row) -> Result<Draft, ScenarioError> {
        let f = self.file.clone();
        let f = f.as_str();
        let arrival_ms = self.arrival_ms(row)?;
        self.check_order(row, arrival_ms)?;
        let index = row.index;
        Ok(match &self.cols {
            Columns::Native {
                name,
                pods,
                min_member,
                duration,
                requests,
                ..
            } => {
                let count = match pods {
                    Some(i) if !row.cell(*i).is_empty() => {
                        let max = limits::MAX_PODS_PER_WORKLOAD as u64;
                        let n = int_cell(f, row, *i, "pods", max)?;
                        if n == 0 {
                            return Err(cell_error(
                                f,
                                row,
                                *i,
                                format!("pods 0: expected an integer from 1 to {max}"),
                            ));
                        }
                        n as u32
                    }
                    _ => 1,
                };
                let min_member = match min_member {
                    Some(i) if !row.cell(*i).is_empty() => {
                        let n = int_cell(f, row, *i, "minMember", u64::from(count))?;
                        if n == 0 {
                            return Err(cell_error(
                                f,
                                row,
                                *i,
                                "minMember 0: expected 1 to the number of pods",
                            ));
                        }
                        Some(n as u32)
                    }
                    _ => None,
                };
                let duration_ms = match duration {
                    Some(i) if !row.cell(*i).is_empty() => {
                        Some(native_time(f, row, *i, "duration")?)
                    }
                    _ => None,
                };
                let mut reqs = Vec::new();
                for (i, r, id) in requests {
                    let v = row.cell(*i);
                    if v.is_empty() {
                        continue;
                    }
                    let q = kueuesim_model::Quantity::parse(v)
                        .map_err(|e| cell_error(f, row, *i, format!("{r} {v:?}: {e}")))?;
                    let a = resource_amount(r, &q)
                        .map_err(|e| e.to_string())
                        .and_then(|a| limits::check_quantity(r, a))
                        .map_err(|e| cell_error(f, row, *i, format!("{r} {v:?}: {e}")))?;
                    reqs.push((*id, a));
                }
                let own_name = name.map(|i| row.cell(i)).filter(|n| !n.is_empty());
                let name = match own_name {
                    Some(n) => {
                        let n = trace_name(n, NAME_MAX.saturating_sub(self.name_prefix.len()));
                        format!("{}{n}", self.name_prefix)
                    }
                    None => format!("{}{}-{index:06}", self.name_prefix, self.trace_name),
                };
                Draft {
                    owner: name.clone(),
                    name,
                    owner_kind: "Job",
                    arrival_ms,
                    duration_ms,
                    shapes: vec![Shape {
                        name: "main",
                        count,
                        requests: reqs,
                        node_selector: Vec::new(),
                    }],
                    min_member,
                }
            }
            Columns::Openb {
                name,
                cpu,
                memory,
                gpu,
                gpu_milli,
                gpu_spec,
                scheduled,
                deletion,
                ..
            } => {
                let cpu_milli = int_cell(f, row, *cpu, "cpu_milli", 1 << 40)? as i64;
                let mem = int_cell(f, row, *memory, "memory_mib", 1 << 40)? as i64;
                let gpus = int_cell(f, row, *gpu, "num_gpu", 1 << 20)? as i64;
                let milli = match gpu_milli {
                    Some(i) if !row.cell(*i).is_empty() => {
                        int_cell(f, row, *i, "gpu_milli", 1000)? as i64
                    }
                    _ => 0,
                };
                let mut reqs = Vec::new();
                if cpu_milli > 0 {
                    reqs.push((self.cpu, cpu_milli));
                }
                if mem > 0 {
                    reqs.push((self.memory, mem * 1024 * 1024));
                }
                if gpus > 0 {
                    match self.gpu_sharing {
                        GpuSharing::Whole => reqs.push((self.gpu, gpus)),
                        GpuSharing::Milli | GpuSharing::Device => {
                            let share = if gpus == 1 && milli > 0 {
                                milli
                            } else {
                                gpus * 1000
                            };
                            reqs.push((self.gpu_milli, share));
                        }
                    }
                }
                let mut node_selector = Vec::new();
                if let Some(i) = gpu_spec {
                    let mut models: Vec<&str> = row
                        .cell(*i)
                        .split('|')
                        .map(str::trim)
                        .filter(|m| !m.is_empty())
                        .collect();
                    let first = models.first().copied();
                    models.sort_unstable();
                    models.dedup();
                    let chosen = match (self.gpu_spec, models.len()) {
                        (_, 0) | (GpuSpec::Ignore, _) => None,
                        (_, 1) => first,
                        (GpuSpec::First, _) => first,
                        (GpuSpec::Exact, _) => {
                            return Err(cell_error(
                                f,
                                row,
                                *i,
                                format!(
                                    "gpu_spec {:?} allows several GPU models, which a nodeSelector cannot express: expected one model, or set spec.openb.gpuSpec to first or ignore",
                                    row.cell(*i)
                                ),
                            ));
                        }
                    };
                    if let Some(m) = chosen {
                        node_selector.push((GPU_MODEL_LABEL.to_string(), m.to_string()));
                    }
                }
                let deleted = opt_seconds(f, row, *deletion, "deletion_time")?;
                let started = opt_seconds(f, row, *scheduled, "scheduled_time")?;
                let duration_ms = match deleted {
                    // Inflated pods never leave: the trace's times are not theirs.
                    _ if self.inflated => None,
                    None => None,
                    Some(d) => {
                        let from = started.unwrap_or(arrival_ms);
                        if d < from {
                            return Err(cell_error(
                                f,
                                row,
                                deletion.expect("deleted"),
                                format!(
                                    "deletion_time {:?} is before the pod started: expected it at or after scheduled_time (or creation_time)",
                                    row.cell(deletion.expect("deleted"))
                                ),
                            ));
                        }
                        Some(d - from)
                    }
                };
                let pod = row.cell(*name);
                if pod.is_empty() {
                    return Err(cell_error(f, row, *name, "empty pod name: expected a name"));
                }
                let (name, owner, duration_ms) = match self.inflated {
                    // A row may be drawn more than once: its position tells the copies apart.
                    true => {
                        let copy = format!("-{index:05}");
                        let max = NAME_MAX.saturating_sub(self.name_prefix.len() + copy.len());
                        let pod = trace_name(pod, max);
                        (
                            format!("{}{pod}{copy}", self.name_prefix),
                            format!("{pod}{copy}"),
                            None,
                        )
                    }
                    false => (
                        format!(
                            "{}{}",
                            self.name_prefix,
                            trace_name(pod, NAME_MAX.saturating_sub(self.name_prefix.len()))
                        ),
                        trace_name(pod, NAME_MAX).into_owned(),
                        duration_ms,
                    ),
                };
                Draft {
                    owner,
                    name,
                    owner_kind: "Pod",
                    arrival_ms,
                    duration_ms,
                    shapes: vec![Shape {
                        name: "main",
                        count: 1,
                        requests: reqs,
                        node_selector,
                    }],
                    min_member: None,
                }
            }
            Columns::Philly { duration, gpus, .. } => {
                let g = int_cell(f, row, *gpus, "num_gpus", 1 << 20)? as u32;
                if g == 0 {
                    return Err(cell_error(
                        f,
                        row,
                        *gpus,
                        "num_gpus 0: expected at least 1 GPU",
                    ));
                }
                let d = seconds(f, row, *duration, "duration")?;
                // A job of more than 8 GPUs is a gang of 8-GPU pods (and one pod of the rest).
                let mut shapes = Vec::new();
                let (full, rest) = if g <= 8 { (0, g) } else { (g / 8, g % 8) };
                if full > 0 {
                    shapes.push(Shape {
                        name: "workers",
                        count: full,
                        requests: vec![(self.gpu, 8)],
                        node_selector: Vec::new(),
                    });
                }
                if rest > 0 {
                    shapes.push(Shape {
                        name: if full > 0 { "rest" } else { "main" },
                        count: 1,
                        requests: vec![(self.gpu, i64::from(rest))],
                        node_selector: Vec::new(),
                    });
                }
                let name = format!("{}{}-{index:06}", self.name_prefix, self.trace_name);
                Draft {
                    owner: name.clone(),
                    name,
                    owner_kind: "Job",
                    arrival_ms,
                    duration_ms: Some(d),
                    shapes,
                    min_member: None,
                }
            }
            Columns::Dlrm {
                name,
                app,
                cpu,
                gpu,
                memory,
                creation,
                scheduled,
                deletion,
            } => {
                let cpu_milli = (decimal(f, row, *cpu, "cpu_request")? * 1000.0).round() as i64;
                let gpus = int_cell(f, row, *gpu, "gpu_request", 1 << 20)? as i64;
                let mem = (decimal(f, row, *memory, "memory_request")? * 1024.0 * 1024.0 * 1024.0)
                    .round() as i64;
                let mut reqs = Vec::new();
                if cpu_milli > 0 {
                    reqs.push((self.cpu, cpu_milli));
                }
                if mem > 0 {
                    reqs.push((self.memory, mem));
                }
                if gpus > 0 {
                    reqs.push((self.gpu, gpus));
                }
                let created = opt_seconds(f, row, Some(*creation), "creation_time")?;
                let started = opt_seconds(f, row, Some(*scheduled), "scheduled_time")?;
                let deleted = opt_seconds(f, row, Some(*deletion), "deletion_time")?;
                // An instance created before the trace window is there from time 0; one still
                // alive at its end runs until the horizon.
                let duration_ms = match deleted {
                    None => None,
                    Some(d) => {
                        let from = started.or(created).unwrap_or(0);
                        if d < from {
                            return Err(cell_error(
                                f,
                                row,
                                *deletion,
                                format!(
                                    "deletion_time {:?} is before the instance started: expected it at or after scheduled_time",
                                    row.cell(*deletion)
                                ),
                            ));
                        }
                        Some(d - from)
                    }
                };
                let inst = row.cell(*name);
                if inst.is_empty() {
                    return Err(cell_error(
                        f,
                        row,
                        *name,
                        "empty instance_sn: expected a name",
                    ));
                }
                let app = row.cell(*app);
                Draft {
                    name: format!(
                        "{}{}",
                        self.name_prefix,
                        trace_name(inst, NAME_MAX.saturating_sub(self.name_prefix.len()))
                    ),
                    owner_kind: "Deployment",
                    owner: if app.is_empty() {
                        String::new()
                    } else {
                        trace_name(app, NAME_MAX).into_owned()
                    },
                    arrival_ms,
                    duration_ms,
                    shapes: vec![Shape {
                        name: "main",
                        count: 1,
                        requests: reqs,
                        node_selector: Vec::new(),
                    }],
                    min_member: None,
                }
            }
        })
    }

    /// The value of `attr` for `row`: its mapping, else the format's own column, else None.
    fn value(&self, attr: Attr, row: &Row) -> Result<Option<String>, ScenarioError> {
        let (v, cell) = match &self.sources[attr as usize] {
            Some(Source::Const(v)) => (v.clone(), None),
            Some(Source::Column { col, map, default }) => {
                let raw = row.cell(*col);
                match map.get(raw).or(default.as_ref()) {
                    Some(v) => (v.clone(), None),
                    None => (raw.to_string(), Some(*col)),
                }
            }
            Some(Source::Random { choices, total }) => {
                let mut pick = draw(self.seed, self.stream * 8 + attr as u64, row.index) % total;
                let mut chosen = &choices[0].0;
                for (v, w) in choices {
                    if pick < *w {
                        chosen = v;
                        break;
                    }
                    pick -= w;
                }
                (chosen.clone(), None)
            }
            None => {
                let own = match (&self.cols, attr) {
                    (Columns::Native { own, .. }, _) => own[attr as usize],
                    (Columns::Philly { cluster, .. }, Attr::LocalQueue) => Some(*cluster),
                    _ => None,
                };
                match own {
                    Some(i) if !row.cell(i).is_empty() => (row.cell(i).to_string(), Some(i)),
                    _ => return Ok(None),
                }
            }
        };
        let mut v = v;
        if let Some(i) = cell {
            let mapped = match attr {
                Attr::Namespace => from_trace(&v, NameRule::Dns1123Label, QUEUE_NAME_MAX),
                Attr::LocalQueue => queue_name(&v),
                _ => Cow::Borrowed(v.as_str()),
            };
            if let Cow::Owned(m) = mapped {
                v = m;
            }
            check_value(attr, &v, &self.names).map_err(|m| cell_error(&self.file, row, i, m))?;
        }
        Ok(Some(v))
    }

    fn workload(&mut self, row: &Row) -> Result<Workload, ScenarioError> {
        let d = self.draft(row)?;
        // The row's times within the limits every input has (`limits`), checked here where
        // every adapter's arrival and duration have been worked out.
        let limit = |what: &str, ms: i64, max: SimDuration| {
            if ms.unsigned_abs() > max.millis().unsigned_abs() {
                return Err(super::csv::at(
                    &self.file,
                    row,
                    1,
                    format!(
                        "{what} {} is out of range: expected at most {max} ({} years)",
                        SimDuration::from_millis(ms),
                        max.millis() / (365 * 24 * 3_600_000)
                    ),
                ));
            }
            Ok(())
        };
        limit("arrival", d.arrival_ms, limits::MAX_TIME)?;
        if let Some(ms) = d.duration_ms {
            limit("duration", ms, limits::MAX_DURATION)?;
        }
        let namespace = self
            .value(Attr::Namespace, row)?
            .unwrap_or_else(|| "default".to_string());
        let (queue, queue_name) = match self.value(Attr::LocalQueue, row)? {
            Some(q) => match self.names.local_queues.get(&(namespace.clone(), q.clone())) {
                Some(id) => (QueueRef::Local(*id), Some(q)),
                None => (QueueRef::Missing(q.clone()), Some(q)),
            },
            // Kueue's defaulting: the namespace's `default` LocalQueue, if any.
            None => match self
                .names
                .local_queues
                .get(&(namespace.clone(), "default".to_string()))
            {
                Some(id) => (QueueRef::Local(*id), Some("default".to_string())),
                None => (QueueRef::Unmanaged, None),
            },
        };
        let (priority_class, priority) = match self.value(Attr::PriorityClass, row)? {
            Some(p) if !p.is_empty() => {
                let v = self.names.priority_classes[&p];
                (Some(p), v)
            }
            // WorkloadPriorityClassDefaulting: the `default` class when it exists.
            _ => match self.names.priority_classes.get("default") {
                Some(v) => (Some("default".to_string()), *v),
                None => (None, 0),
            },
        };
        let scheduler_name = self
            .value(Attr::SchedulerName, row)?
            .unwrap_or_else(|| "default-scheduler".to_string());
        let topology_request = match self.value(Attr::Topology, row)? {
            Some(t) => topology(&t).unwrap_or(None),
            None => None,
        };
        let managed = queue != QueueRef::Unmanaged;
        let pod_sets = d
            .shapes
            .into_iter()
            .map(|s| {
                // FNV-1a over the text `{resource index}={amount};` per request, then
                // `ns:{key}={value};` per selector label, fed piece by piece (no string built).
                let mut shape = Fnv::new();
                for (r, a) in &s.requests {
                    shape.int(r.index() as i64).bytes(b"=").int(*a).bytes(b";");
                }
                for (k, v) in &s.node_selector {
                    shape.bytes(b"ns:").bytes(k.as_bytes()).bytes(b"=");
                    shape.bytes(v.as_bytes()).bytes(b";");
                }
                PodSet {
                    name: s.name.to_string(),
                    count: s.count,
                    min_count: None,
                    requests: ResourceList::from_pairs(s.requests),
                    node_selector: Labels::new(s.node_selector),
                    tolerations: Vec::new(),
                    priority_class_name: None,
                    preempt_never: false,
                    spec_shape: shape.0,
                    topology_request: topology_request.clone(),
                    topology_slice: None,
                    gpu_share: None,
                    vgpu: None,
                    info: None,
                }
            })
            .collect();
        let at = SimTime::from_millis(d.arrival_ms);
        Ok(Workload {
            uid: [namespace.as_str(), "/", d.name.as_str()].concat(),
            namespace,
            kind: if managed {
                "Workload".into()
            } else {
                d.owner_kind.into()
            },
            owner: Some((d.owner_kind.into(), d.owner)),
            name: d.name,
            job_uid: None,
            queue,
            queue_name,
            priority_class,
            priority,
            scheduler_name,
            created_at: at,
            arrival: at,
            duration: d.duration_ms.map(SimDuration::from_millis),
            pod_sets,
            active: true,
            max_execution_time: None,
            initial_admission: None,
            last_eviction: None,
            creation_blocked: None,
            suspended: false,
            requeue_state: None,
            gang: match d.min_member {
                None => Arc::clone(&self.default_gang),
                Some(_) => Arc::new(GangSpec {
                    min_member: d.min_member,
                    ..GangSpec::default()
                }),
            },
            resilience: Default::default(),
            serving: None,
        })
    }

    /// The trace's format.
    pub fn format(&self) -> TraceFormat {
        self.format
    }
}

impl Iterator for TraceWorkloads {
    type Item = Result<Workload, ScenarioError>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = match self.take_row()? {
            Ok(n) => n,
            Err(e) => return Some(Err(e)),
        };
        Some(match &next {
            NextRow::Shared(rows, i) => self.workload(&rows[*i]),
            NextRow::Read(row) => self.workload(row),
        })
    }
}

/// A row taken from a trace: one of its sorted rows (shared), or one read from its file.
enum NextRow {
    Shared(std::rc::Rc<[Row]>, usize),
    Read(Row),
}

#[cfg(test)]
mod tests {
    use super::Fnv;
    use proptest::prelude::*;

    /// FNV-1a of a whole text, as the shape digest was first computed.
    fn fnv_text(text: &str) -> u64 {
        text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }

    proptest! {
        /// Feeding the digest piece by piece, integers digit by digit, gives the digest of
        /// the formatted text: trace workloads keep their shape classes.
        #[test]
        fn pieces_hash_as_the_formatted_text(
            requests in proptest::collection::vec((0usize..40, any::<i64>()), 0..4),
            labels in proptest::collection::vec(("[a-z./-]{0,8}", "[a-z0-9-]{0,8}"), 0..3),
        ) {
            let mut text = String::new();
            let mut h = Fnv::new();
            for (r, a) in &requests {
                text.push_str(&format!("{r}={a};"));
                h.int(*r as i64).bytes(b"=").int(*a).bytes(b";");
            }
            for (k, v) in &labels {
                text.push_str(&format!("ns:{k}={v};"));
                h.bytes(b"ns:").bytes(k.as_bytes()).bytes(b"=").bytes(v.as_bytes()).bytes(b";");
            }
            prop_assert_eq!(h.0, fnv_text(&text));
        }
    }
}
