//! Overrides of a scenario's objects: `--patch` files and `--set` arguments, merged into the
//! objects the loader reads (before it reads them), with every value keeping the file, line
//! and column it was written at — so a what-if variant needs no copy of the scenario.
//!
//! A patch document names its object by apiVersion group, kind, `metadata.name` and (when
//! given) `metadata.namespace`, and is merged into it with Kubernetes' strategic-merge rules
//! (`merge`); `$patch: delete` removes the object; an object the scenario lacks is added. A
//! `--set` changes one field (`set`). Patches apply in the order given, then `--set`s. Objects
//! a trace adapter generates (its ClusterQueues, nodes) are overridden like the user's own.

pub mod merge;
pub mod set;
pub mod tree;

use serde::Deserialize;

use crate::error::ScenarioError;
use crate::source::{ObjectText, SourceFile, split_objects};

use self::tree::{Node, Value};

/// `" (closest: \"x\")"` for the candidate nearest to `wanted`, or nothing when none is near.
pub fn closest_hint<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let best = candidates
        .map(|c| (edit_distance(wanted, c), c))
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    match best {
        Some((d, c)) if d <= wanted.chars().count().max(3) => format!(" (closest: {c:?})"),
        _ => String::new(),
    }
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The `--set` arguments as inputs of their own, so errors and code frames can point into
/// them: `--set[1]` is the first.
pub fn set_sources(args: &[String]) -> Vec<SourceFile> {
    args.iter()
        .enumerate()
        .map(|(i, a)| SourceFile {
            name: format!("--set[{}]", i + 1),
            text: a.clone(),
        })
        .collect()
}

/// One override, in the order it applies.
enum Override<'f> {
    Patch {
        doc: ObjectText<'f>,
        tree: Node<'f>,
        /// None for a Kueue Configuration: it has no name, and a scenario at most one.
        name: Option<String>,
        namespace: Option<String>,
        delete: bool,
    },
    Set(set::SetArg<'f>),
}

/// The overrides of one load, and which of them have been applied.
pub struct Overrides<'f> {
    items: Vec<Override<'f>>,
    applied: Vec<bool>,
}

/// The name and namespace of an object, read without building its tree.
#[derive(Deserialize)]
struct Head {
    metadata: Option<HeadMeta>,
}

#[derive(Deserialize)]
struct HeadMeta {
    name: Option<String>,
    namespace: Option<String>,
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// Whether `written` (a `--set` argument's kind: `clusterqueue`, `ClusterQueues`, `cq`) names
/// objects of `kind`, as kubectl resolves a resource name: the kind, its plural, or a short name.
pub fn kind_matches(written: &str, kind: &str) -> bool {
    // `KIND.GROUP` (kubectl's RESOURCE.GROUP): the group is checked by `group_matches`.
    let written = written.split_once('.').map_or(written, |(k, _)| k);
    let w = written.to_ascii_lowercase();
    let k = kind.to_ascii_lowercase();
    if w == k || w == format!("{k}s") || w == format!("{k}es") {
        return true;
    }
    // The short names of the CRDs and built-in kinds (`kubectl api-resources`).
    let short: &[&str] = match k.as_str() {
        "clusterqueue" => &["cq"],
        "localqueue" => &["lq", "queue"],
        "resourceflavor" => &["rf", "flavor"],
        "workload" => &["wl"],
        "priorityclass" => &["pc"],
        "node" => &["no"],
        "namespace" => &["ns"],
        "deployment" => &["deploy"],
        "statefulset" => &["sts"],
        "podgroup" => &["pg"],
        _ => &[],
    };
    short.contains(&w.as_str())
}

/// Whether an object of `api_version` is in the API group a written `KIND.GROUP` names
/// (`queue.scheduling.run.ai`: KAI's Queue, `queue.scheduling.volcano.sh`: Volcano's), as
/// kubectl's RESOURCE.GROUP tells kinds of one name apart; a kind without a group matches
/// every group.
fn group_matches(written: &str, api_version: &str) -> bool {
    match written.split_once('.') {
        None => true,
        Some((_, group)) => {
            let of_object = api_version.rsplit_once('/').map_or("", |(g, _)| g);
            of_object.eq_ignore_ascii_case(group)
        }
    }
}

/// An object's name and namespace (empty when missing).
fn name_and_namespace(obj: &ObjectText<'_>) -> (String, String) {
    match crate::source::from_yaml::<Head>(&obj.text) {
        Ok(Head {
            metadata: Some(m), ..
        }) => (m.name.unwrap_or_default(), m.namespace.unwrap_or_default()),
        // A malformed object is the loader's to report, where it reads it.
        _ => (String::new(), String::new()),
    }
}

/// Whether an object in `namespace` (empty: not written) is the one a patch or `--set` names
/// with `wanted` (None: not written). `matches` compares a name: equality for a patch (its
/// `metadata.namespace` is the object's own, and a patch that adds an object writes it), a
/// pattern for a `--set` (`glob`).
fn namespace_matches(
    wanted: Option<&str>,
    namespace: &str,
    matches: impl Fn(&str, &str) -> bool,
) -> bool {
    match wanted {
        None => true,
        Some(w) => matches(w, namespace) || (namespace.is_empty() && matches(w, "default")),
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters (none
/// included) and everything else for itself. Kubernetes names cannot hold a `*`, so a name
/// without one matches only itself.
///
/// The greedy two-pointer match: a `*` first takes nothing, and on a mismatch the last `*`
/// seen takes one more byte and the match resumes after it. Only the last `*` ever needs to
/// be retried (an earlier one taking more could only reach positions the last one covers),
/// so the work is at most `pattern.len() * name.len()` steps, whatever the number of `*`
/// (`--set`, a Sweep's `set` and `compare --figures` match user patterns against names of
/// up to 253 characters). Bytes are compared, not characters: `*` is ASCII and both strings
/// are UTF-8, so a literal run can only match from a character boundary.
pub fn glob(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0usize, 0usize);
    // The last `*` seen (its index in `p`) and the first byte of `n` it does not yet take.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if p.get(pi) == Some(&b'*') {
            star = Some((pi, ni));
            pi += 1;
        } else if p.get(pi) == Some(&n[ni]) {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            star = Some((sp, sn + 1));
            pi = sp + 1;
            ni = sn + 1;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

impl<'f> Overrides<'f> {
    /// Reads the patch files and `--set` arguments (`set_sources`).
    pub fn read(
        patches: &'f [SourceFile],
        sets: &'f [SourceFile],
    ) -> Result<Overrides<'f>, ScenarioError> {
        let mut items = Vec::new();
        for f in patches {
            for doc in split_objects(f)? {
                let tree = tree::parse(f, &doc.text, doc.line_offset)?;
                items.push(patch_override(doc, tree)?);
            }
        }
        for s in sets {
            items.push(Override::Set(set::parse(s)?));
        }
        let applied = vec![false; items.len()];
        Ok(Overrides { items, applied })
    }

    /// The overrides of one Timeline change: its `patch` objects (each with its tree, placed
    /// in the Timeline's file) and its `set`s, patches first as on the command line.
    pub fn of_change(
        patches: Vec<(ObjectText<'f>, Node<'f>)>,
        sets: Vec<set::SetArg<'f>>,
    ) -> Result<Overrides<'f>, ScenarioError> {
        let mut items = Vec::new();
        for (doc, tree) in patches {
            items.push(patch_override(doc, tree)?);
        }
        items.extend(sets.into_iter().map(Override::Set));
        let applied = vec![false; items.len()];
        Ok(Overrides { items, applied })
    }

    /// Whether there is nothing to apply.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Applies, in order, the overrides not yet applied whose kind `phase` selects (given the
    /// kind as written in the scenario, or in a `--set`). Notes for the user (an object a
    /// patch added) go to `warnings`.
    pub fn apply(
        &mut self,
        objects: &mut Vec<ObjectText<'f>>,
        phase: impl Fn(&str) -> bool,
        warnings: &mut Vec<String>,
    ) -> Result<(), ScenarioError> {
        for i in 0..self.items.len() {
            if self.applied[i] {
                continue;
            }
            match &self.items[i] {
                Override::Patch { doc, .. } if !phase(&doc.kind) => continue,
                Override::Set(s) if !phase(&s.kind) => continue,
                _ => {}
            }
            self.applied[i] = true;
            match &self.items[i] {
                Override::Patch {
                    doc,
                    tree,
                    name,
                    namespace,
                    delete,
                } => apply_patch(
                    objects,
                    doc,
                    tree,
                    name.as_deref(),
                    namespace.as_deref(),
                    *delete,
                    warnings,
                )?,
                Override::Set(s) => apply_set(objects, s)?,
            }
        }
        Ok(())
    }
}

/// A patch document as an override: the object it names and whether it deletes it.
fn patch_override<'f>(doc: ObjectText<'f>, tree: Node<'f>) -> Result<Override<'f>, ScenarioError> {
    let meta = tree.get("metadata");
    let name = meta.and_then(|m| m.text_of("name"));
    // Kueue's Configuration is a file, not an API object: it has no name, and a
    // scenario has at most one, which a patch of it changes (or adds).
    let name = if is_configuration(&doc) {
        None
    } else if let Some(name) = name {
        Some(name)
    } else {
        return Err(doc.error_at(
            1,
            1,
            format!(
                "a patch of a {} without metadata.name: expected the name of the object to change",
                doc.kind
            ),
        ));
    };
    let namespace = meta.and_then(|m| m.text_of("namespace"));
    let delete = tree.text_of("$patch").as_deref() == Some("delete");
    Ok(Override::Patch {
        doc,
        tree,
        name,
        namespace,
        delete,
    })
}

/// Whether an object is Kueue's Configuration (`config.kueue.x-k8s.io`).
fn is_configuration(obj: &ObjectText<'_>) -> bool {
    obj.kind == "Configuration" && group_of(&obj.api_version) == "config.kueue.x-k8s.io"
}

/// Strict field validation of what override `written_by` wrote into `tree`, an object of
/// `obj`'s kind (`convert::check_override`).
fn check_fields(
    obj: &ObjectText<'_>,
    tree: &Node<'_>,
    written_by: &SourceFile,
) -> Result<(), ScenarioError> {
    crate::convert::check_override(tree, &obj.api_version, &obj.kind, written_by)
}

fn apply_patch<'f>(
    objects: &mut Vec<ObjectText<'f>>,
    doc: &ObjectText<'f>,
    patch: &Node<'f>,
    name: Option<&str>,
    namespace: Option<&str>,
    delete: bool,
    warnings: &mut Vec<String>,
) -> Result<(), ScenarioError> {
    let group = group_of(&doc.api_version);
    // A name with `*` is a pattern, as in `--set` (`metadata.name: "*"`: every object of the
    // kind, in every namespace unless the patch gives one); a namespace is a name (a patch
    // that adds an object writes its namespace). A Configuration (no name) is the scenario's
    // one Configuration.
    let pattern = name.is_some_and(|n| n.contains('*'));
    let found: Vec<usize> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| o.kind == doc.kind && group_of(&o.api_version) == group)
        .filter(|(_, o)| {
            let Some(name) = name else { return true };
            let (n, ns) = name_and_namespace(o);
            glob(name, &n) && namespace_matches(namespace, &ns, |w, n| w == n)
        })
        .map(|(i, _)| i)
        .collect();
    let what = || match name {
        Some(n) if pattern => format!("{} matching {n:?}", doc.kind),
        Some(n) => format!("{} {n:?}", doc.kind),
        None => format!("Kueue {}", doc.kind),
    };
    let hint = |objects: &[ObjectText<'_>]| match name {
        Some(n) if !pattern => {
            let names = names_of_kind(objects, |k| k == doc.kind);
            closest_hint(n, names.iter().map(String::as_str))
        }
        _ => String::new(),
    };
    match found.as_slice() {
        [] if delete => Err(doc.error_at(
            1,
            1,
            format!(
                "`$patch: delete` of {}, but the scenario has none{}",
                what(),
                hint(objects)
            ),
        )),
        [] if pattern => Err(doc.error_at(
            1,
            1,
            format!(
                "a patch of every {}, but the scenario has none: a pattern adds no object",
                what()
            ),
        )),
        [] => {
            // An object the scenario lacks is added, as `kubectl apply` would create it.
            let mut added = doc.clone();
            let mut tree = patch.clone();
            if has_directive(&tree) {
                merge_into_nothing(&mut tree)?;
                let (text, origins) = tree::emit(&tree);
                added.text = text;
                added.line_offset = 0;
                added.origins = Some(origins);
            }
            check_fields(doc, &tree, doc.file)?;
            // A named object the scenario lacks is usually a typo of one it has; a
            // Configuration has no name to mistype, and without one Kueue runs with its
            // defaults, which the patch's fields now change.
            if name.is_some() {
                warnings.push(format!(
                    "{}: {} is not in the scenario: the patch adds it{}",
                    doc.kind_pos,
                    what(),
                    hint(objects)
                ));
            }
            objects.push(added);
            Ok(())
        }
        found if delete && (found.len() == 1 || pattern) => {
            for &i in found.iter().rev() {
                objects.remove(i);
            }
            Ok(())
        }
        found if found.len() == 1 || pattern => {
            // A pattern names the objects; it is not a name to give them.
            let mut patch = patch.clone();
            if pattern
                && let Value::Map(top) = &mut patch.value
                && let Some(meta) = top.iter_mut().find(|e| e.key == "metadata")
                && let Value::Map(fields) = &mut meta.value.value
            {
                fields.retain(|f| f.key != "name");
            }
            for &i in found {
                let obj = &mut objects[i];
                let mut tree = parse_object(obj)?;
                merge::merge(&mut tree, patch.clone())?;
                check_fields(obj, &tree, doc.file)?;
                rewrite(obj, &tree);
            }
            Ok(())
        }
        many => Err(doc.error_at(
            1,
            1,
            format!(
                "{} is in {} namespaces: give metadata.namespace",
                what(),
                many.len()
            ),
        )),
    }
}

fn apply_set<'f>(objects: &mut [ObjectText<'f>], s: &set::SetArg<'f>) -> Result<(), ScenarioError> {
    // A pattern (`cq/*:…`, `lq/team-*/*:…`) sets the field in every object it matches, in
    // the scenario's order; a path that fails on one of them names it.
    let pattern = s.name.contains('*') || s.namespace.as_deref().is_some_and(|n| n.contains('*'));
    let found: Vec<usize> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| kind_matches(&s.kind, &o.kind) && group_matches(&s.kind, &o.api_version))
        .filter(|(_, o)| {
            let (n, ns) = name_and_namespace(o);
            glob(&s.name, &n) && namespace_matches(s.namespace.as_deref(), &ns, glob)
        })
        .map(|(i, _)| i)
        .collect();
    match found.as_slice() {
        [] => Err(no_object_for(objects, s, pattern)),
        many if many.len() > 1 && !pattern => {
            let kinds: Vec<String> = many
                .iter()
                .map(|i| {
                    let (_, ns) = name_and_namespace(&objects[*i]);
                    format!(
                        "{} of {} in {:?}",
                        objects[*i].kind, objects[*i].api_version, ns
                    )
                })
                .collect();
            Err(s.target_at.error(format!(
                "{}/{} names {} objects ({}): give KIND/NAMESPACE/NAME, with KIND.GROUP (queue.scheduling.run.ai) for kinds of one name in different API groups",
                s.kind,
                s.name,
                many.len(),
                kinds.join(", ")
            )))
        }
        found => {
            for &i in found {
                let obj = &mut objects[i];
                let mut tree = parse_object(obj)?;
                s.apply(&mut tree)
                    .and_then(|()| check_fields(obj, &tree, s.target_at.file))
                    .map_err(|e| match e {
                        ScenarioError::At {
                            pos,
                            message,
                            snippet,
                        } if pattern => {
                            let (n, ns) = name_and_namespace(obj);
                            let ns = if ns.is_empty() {
                                String::new()
                            } else {
                                format!(" in namespace {ns:?}")
                            };
                            ScenarioError::At {
                                pos,
                                message: format!("{} {n:?}{ns}: {message}", obj.kind),
                                snippet,
                            }
                        }
                        other => other,
                    })?;
                rewrite(obj, &tree);
            }
            Ok(())
        }
    }
}

/// Why a `--set` matches no object: no object of its kind (the closest kind), or none of that
/// name (the closest name; for a pattern, the kind's objects as NAMESPACE/NAME, at most twenty).
fn no_object_for(objects: &[ObjectText<'_>], s: &set::SetArg<'_>, pattern: bool) -> ScenarioError {
    let names = names_of_kind(objects, |k| kind_matches(&s.kind, k));
    if names.is_empty() {
        let mut kinds: Vec<&str> = objects.iter().map(|o| o.kind.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let hint = closest_hint(&s.kind, kinds.into_iter());
        return s.target_at.error(format!(
            "the scenario has no object of kind {:?}{hint}",
            s.kind
        ));
    }
    let hint = if pattern {
        let mut all: Vec<String> = objects
            .iter()
            .filter(|o| kind_matches(&s.kind, &o.kind))
            .map(|o| match name_and_namespace(o) {
                (n, ns) if ns.is_empty() => n,
                (n, ns) => format!("{ns}/{n}"),
            })
            .collect();
        all.sort();
        all.dedup();
        let more = all.len().saturating_sub(20);
        all.truncate(20);
        let more = if more > 0 {
            format!(", … {more} more")
        } else {
            String::new()
        };
        format!(" (its objects: {}{more})", all.join(", "))
    } else {
        closest_hint(&s.name, names.iter().map(String::as_str))
    };
    let kind = objects
        .iter()
        .find(|o| kind_matches(&s.kind, &o.kind))
        .map_or(s.kind.as_str(), |o| o.kind.as_str());
    let named = if pattern { "matching" } else { "named" };
    s.target_at.error(format!(
        "the scenario has no {kind} {named} {:?}{}{hint}",
        s.name,
        s.namespace
            .as_deref()
            .map_or(String::new(), |n| format!(" in namespace {n:?}"))
    ))
}

/// The names of the objects whose kind `select` accepts, sorted.
fn names_of_kind(objects: &[ObjectText<'_>], select: impl Fn(&str) -> bool) -> Vec<String> {
    let mut names: Vec<String> = objects
        .iter()
        .filter(|o| select(&o.kind))
        .map(|o| name_and_namespace(o).0)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// An object's tree, its places in the input (through an earlier override's line map).
pub(crate) fn parse_object<'f>(obj: &ObjectText<'f>) -> Result<Node<'f>, ScenarioError> {
    tree::parse_mapped(obj.file, &obj.text, obj.line_offset, obj.origins.as_deref())
}

/// Replaces an object's text by its changed tree, with the map back to the input.
pub(crate) fn rewrite<'f>(obj: &mut ObjectText<'f>, tree: &Node<'f>) {
    let (text, origins) = tree::emit(tree);
    obj.text = text;
    obj.line_offset = 0;
    obj.origins = Some(origins);
}

fn has_directive(node: &Node<'_>) -> bool {
    match &node.value {
        Value::Scalar(_) => false,
        Value::Seq(items) => items.iter().any(has_directive),
        Value::Map(m) => m
            .iter()
            .any(|e| e.key.starts_with('$') || has_directive(&e.value)),
    }
}

/// A patch that creates its object: merged into an empty object, so its directives are checked
/// (`$patch: merge` goes, anything else has nothing to act on).
fn merge_into_nothing(tree: &mut Node<'_>) -> Result<(), ScenarioError> {
    let mut empty = Node {
        value: Value::Map(Vec::new()),
        at: tree.at,
    };
    merge::merge(&mut empty, tree.clone())?;
    *tree = empty;
    Ok(())
}

#[cfg(test)]
mod tests;
