//! Volcano Queues (`scheduling.volcano.sh/v1beta1`): weight, capability, deserved,
//! guarantee, parent, priority, reclaimable and `status.state`, and which Queue a Volcano
//! gang names.

use kueuesim_model::{QueuePlugin, ResourceList, VolcanoQueue};

use super::core::{Builder, err_at, err_obj, name_of, quota};
use crate::error::ScenarioError;
use crate::source::ObjectText;
use crate::wire;

impl Builder<'_> {
    /// Reads the Volcano Queues into `world.volcano_queues` (input order) and their index.
    pub(super) fn build_volcano_queues(&mut self) -> Result<(), ScenarioError> {
        let queues = std::mem::take(&mut self.volcano_queues);
        let names: Vec<String> = queues
            .iter()
            .map(|q| name_of(q.src, &q.obj.metadata).map(str::to_string))
            .collect::<Result<_, _>>()?;
        for (q, name) in queues.iter().zip(&names) {
            self.remember(q.src, "", name)?;
            self.index
                .volcano_queues
                .insert(name.clone(), self.index.volcano_queues.len());
        }
        for (q, name) in queues.iter().zip(&names) {
            let src = q.src;
            let spec = &q.obj.spec;
            // Read so that a misspelt field is an error, but not simulated: said, not dropped.
            let unsimulated: Vec<&str> = [
                ("affinity", spec.affinity.is_some()),
                ("extendClusters", spec.extend_clusters.is_some()),
                ("type", spec.type_.is_some()),
                ("dequeueStrategy", spec.dequeue_strategy.is_some()),
            ]
            .into_iter()
            .filter_map(|(f, set)| set.then_some(f))
            .collect();
            if !unsimulated.is_empty() {
                self.warnings.push(format!(
                    "{}: Volcano Queue {}: spec.{} not simulated yet: the queue places its jobs as without it",
                    src.kind_pos,
                    kueuesim_model::names::shown(name),
                    unsimulated.join(", spec.")
                ));
            }
            // The admission webhook's defaults: weight 1, reclaimable true; it refuses a
            // weight outside 1..65535 (`validateQueue`), so that is an error here.
            let weight = match &spec.weight {
                None => 1,
                Some(w) if (1..=65535).contains(&w.value) => w.value,
                Some(w) if w.value == 0 => 1,
                Some(w) => {
                    return Err(err_at(
                        src,
                        w,
                        format!("weight {}: expected an integer from 1 to 65535", w.value),
                    ));
                }
            };
            let priority = match &spec.priority {
                None => 0,
                Some(p) => i32::try_from(p.value).map_err(|_| {
                    err_at(
                        src,
                        p,
                        format!("priority {}: expected a 32-bit integer", p.value),
                    )
                })?,
            };
            let open = match &q.obj.status.state {
                None => true,
                Some(s) => match s.value.as_str() {
                    "Open" => true,
                    "Closed" | "Closing" => false,
                    // A dump's `Unknown` state: the queue controller has not seen it yet;
                    // the scheduler only takes jobs in an Open queue.
                    "Unknown" => false,
                    other => {
                        return Err(err_at(
                            src,
                            s,
                            format!(
                                "status.state {other:?}: expected Open, Closed, Closing or Unknown"
                            ),
                        ));
                    }
                },
            };
            let parent = match &spec.parent {
                None => None,
                Some(p) if p.value.is_empty() => None,
                Some(p) => match self.index.volcano_queues.get(&p.value) {
                    Some(&i) if names[i] == *name => {
                        return Err(err_at(
                            src,
                            p,
                            format!(
                                "parent {:?} is the queue itself: expected another Volcano Queue",
                                p.value
                            ),
                        ));
                    }
                    Some(&i) => Some(i),
                    // Upstream's `root` queue, implicit when the input has none.
                    None if p.value == "root" => None,
                    None => {
                        return Err(err_at(
                            src,
                            p,
                            format!(
                                "parent {:?} is not a Volcano Queue in the input{}: expected a scheduling.volcano.sh Queue name, or root",
                                p.value,
                                crate::overlay::closest_hint(
                                    &p.value,
                                    names.iter().map(String::as_str)
                                )
                            ),
                        ));
                    }
                },
            };
            let capability = self.queue_resources(src, &spec.capability)?;
            let deserved = self.queue_resources(src, &spec.deserved)?;
            let guarantee = self
                .queue_resources(src, &spec.guarantee.resource)?
                .unwrap_or_default();
            self.world.volcano_queues.push(VolcanoQueue {
                name: name.clone(),
                weight,
                capability,
                deserved,
                guarantee,
                parent,
                open,
                reclaimable: spec.reclaimable.unwrap_or(true),
                priority,
            });
        }
        // The hierarchy is a tree: a parent chain that comes back to a queue is refused.
        let vq = &self.world.volcano_queues;
        for start in 0..vq.len() {
            let mut cur = vq[start].parent;
            let mut steps = 0;
            while let Some(c) = cur {
                steps += 1;
                if c == start {
                    let message = format!(
                        "Volcano Queue {} is its own ancestor through spec.parent: expected a tree of queues",
                        kueuesim_model::names::shown(&vq[start].name)
                    );
                    let src = queues[start].src;
                    return Err(match &queues[start].obj.spec.parent {
                        Some(p) => err_at(src, p, message),
                        None => err_obj(src, message),
                    });
                }
                // A chain that leads into a cycle without being part of it: the cycle's
                // own queues report it.
                if steps > vq.len() {
                    break;
                }
                cur = vq[c].parent;
            }
        }
        Ok(())
    }

    /// A queue's resource list (`capability`, `deserved`, `guarantee.resource`); None when
    /// the map is empty (unset).
    fn queue_resources(
        &mut self,
        src: &ObjectText<'_>,
        map: &wire::ResourceMap,
    ) -> Result<Option<ResourceList>, ScenarioError> {
        if map.is_empty() {
            return Ok(None);
        }
        super::names::resource_names(src, map)?;
        let mut pairs = Vec::new();
        for (r, q) in map {
            let amount = quota(src, r, q)?;
            pairs.push((self.world.resources.intern(r), amount));
        }
        Ok(Some(ResourceList::from_pairs(pairs)))
    }

    /// The Volcano Queue a gang names (`name`, from its PodGroup's `spec.queue`, its Volcano
    /// Job's `spec.queue` or the annotation `scheduling.volcano.sh/queue-name`): its index,
    /// adding Volcano's implicit `default` when the input has no Queue of that name. A name
    /// that is no Queue is an error, as Volcano's admission webhook refuses such a PodGroup
    /// ("unable to find queue").
    pub(super) fn volcano_queue_named(
        &mut self,
        src: &ObjectText<'_>,
        at: Option<&wire::S>,
        name: &str,
    ) -> Result<usize, ScenarioError> {
        if let Some(&i) = self.index.volcano_queues.get(name) {
            self.refuse_non_leaf_queue(src, at, i)?;
            return Ok(i);
        }
        if name == "default" {
            let i = self.world.volcano_queues.len();
            self.world
                .volcano_queues
                .push(VolcanoQueue::implicit_default());
            self.index.volcano_queues.insert(name.to_string(), i);
            return Ok(i);
        }
        let hint = crate::overlay::closest_hint(
            name,
            self.world.volcano_queues.iter().map(|q| q.name.as_str()),
        );
        let message = format!(
            "queue {name:?} is not a Volcano Queue in the input{hint}: expected a scheduling.volcano.sh Queue name, or default"
        );
        Err(match at {
            Some(s) => err_at(src, s, message),
            None => err_obj(src, message),
        })
    }

    /// With the capacity plugin's `enableHierarchy`, a job in a queue that has children is an
    /// error: upstream's `buildHierarchicalQueueAttrs` then returns false, which leaves the
    /// plugin not ready to schedule, so `AllocatableFn` and `JobEnqueueableFn` refuse every
    /// job of every queue for as long as such a PodGroup exists (only the Volcano Job webhook
    /// refuses a non-leaf queue; a bare PodGroup is let through).
    fn refuse_non_leaf_queue(
        &self,
        src: &ObjectText<'_>,
        at: Option<&wire::S>,
        queue: usize,
    ) -> Result<(), ScenarioError> {
        let hierarchy = self
            .world
            .config
            .volcano
            .queues
            .as_ref()
            .is_some_and(|q| q.plugin == Some(QueuePlugin::Capacity { hierarchy: true }));
        let children: Vec<&str> = self
            .world
            .volcano_queues
            .iter()
            .filter(|q| q.parent == Some(queue))
            .map(|q| q.name.as_str())
            .collect();
        if !hierarchy || children.is_empty() {
            return Ok(());
        }
        let message = format!(
            "queue {:?} has child queues ({}): with the capacity plugin's enableHierarchy a job must be in a leaf queue; upstream's capacity plugin stops scheduling every queue while a PodGroup sits in a non-leaf one (buildHierarchicalQueueAttrs)",
            self.world.volcano_queues[queue].name,
            children.join(", ")
        );
        Err(match at {
            Some(s) => err_at(src, s, message),
            None => err_obj(src, message),
        })
    }
}
