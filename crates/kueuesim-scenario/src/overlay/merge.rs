//! Strategic merge of a partial object into an object, as `kubectl patch` and kustomize do it:
//! mappings merge key by key, a `null` value removes its key, lists of named items merge item
//! by item on `name`, other lists are replaced, and `$patch` directives replace or delete.

use crate::error::ScenarioError;

use super::tree::{Entry, Node, Scalar, Value};

/// The merge key of lists of named items (`containers`, `resourceGroups[].flavors`,
/// `flavors[].resources`, `podSets`, `replicatedJobs`, …). Kubernetes' built-in types declare a
/// `patchMergeKey` per list; Kueue's CRDs declare `listType=map` with `listMapKeys: [name]`
/// for these. A ClusterQueue's `resourceGroups` have no name: a group is the one covering the
/// same resources (`coveredResources`, compared as a set), which is how Kueue itself tells
/// them apart. Other lists (`coveredResources`, `tolerations`, `args`) are replaced whole, as
/// kubectl replaces a list that has no merge key.
pub const MERGE_KEY: &str = "name";

/// The identity of a list item under `field` for merging, if the list merges item by item.
fn identity(field: &str, item: &Node<'_>) -> Option<String> {
    if field == "resourceGroups" {
        let Value::Seq(covered) = &item.get("coveredResources")?.value else {
            return None;
        };
        let mut names: Vec<String> = covered
            .iter()
            .map(|n| match &n.value {
                Value::Scalar(s) => Some(s.as_text()),
                _ => None,
            })
            .collect::<Option<_>>()?;
        names.sort();
        return Some(format!("coveredResources=[{}]", names.join(",")));
    }
    item.text_of(MERGE_KEY).map(|n| format!("{MERGE_KEY}={n}"))
}

/// The directive key (`$patch: replace | delete | merge`).
const DIRECTIVE: &str = "$patch";

/// Merges `patch` into `base`.
pub fn merge<'f>(base: &mut Node<'f>, patch: Node<'f>) -> Result<(), ScenarioError> {
    merge_field("", base, patch)
}

/// Merges `patch` into `base`, the value of `field` in its mapping.
fn merge_field<'f>(field: &str, base: &mut Node<'f>, patch: Node<'f>) -> Result<(), ScenarioError> {
    let directive = directive_of(&patch)?;
    match directive.as_deref() {
        Some("replace") => {
            let mut replacement = strip_directive(patch);
            reject_directives(&mut replacement)?;
            *base = replacement;
            return Ok(());
        }
        Some("delete") => {
            return Err(patch
                .at
                .error("`$patch: delete` removes a list item or a whole object; here it has nothing to remove (remove a field with `field: null`)"));
        }
        _ => {}
    }
    match (&mut base.value, patch.value) {
        (Value::Map(b), Value::Map(p)) => merge_maps(b, p),
        (Value::Seq(b), Value::Seq(p)) => merge_lists(field, b, p),
        (_, value) => {
            // A scalar, or a value of another kind: the patch's value replaces the base's.
            let mut replacement = Node {
                value,
                at: patch.at,
            };
            reject_directives(&mut replacement)?;
            *base = replacement;
            Ok(())
        }
    }
}

fn merge_maps<'f>(base: &mut Vec<Entry<'f>>, patch: Vec<Entry<'f>>) -> Result<(), ScenarioError> {
    for e in patch {
        if e.key == DIRECTIVE {
            continue; // read by `merge`
        }
        if e.key.starts_with('$') {
            return Err(e.key_at.error(format!(
                "unsupported patch directive `{}`: expected `$patch: replace`, `$patch: delete` or `$patch: merge`",
                e.key
            )));
        }
        let null = matches!(&e.value.value, Value::Scalar(s) if s.is_null());
        match base.iter().position(|b| b.key == e.key) {
            Some(i) if null => {
                base.remove(i);
            }
            Some(i) => merge_field(&e.key, &mut base[i].value, e.value)?,
            None if null => {
                // Removing what is not there: `kubectl patch` accepts it, and so do we (the
                // patch may be meant for several scenarios).
            }
            None => {
                let mut value = e.value;
                reject_directives(&mut value)?;
                base.push(Entry {
                    key: e.key,
                    key_at: e.key_at,
                    value,
                });
            }
        }
    }
    Ok(())
}

fn merge_lists<'f>(
    field: &str,
    base: &mut Vec<Node<'f>>,
    patch: Vec<Node<'f>>,
) -> Result<(), ScenarioError> {
    // `- $patch: replace` anywhere in the list: the rest of the list replaces the base's.
    let mut replace = false;
    let mut items = Vec::with_capacity(patch.len());
    for item in patch {
        if let Value::Map(m) = &item.value
            && m.len() == 1
            && m[0].key == DIRECTIVE
        {
            match directive_of(&item)?.as_deref() {
                Some("replace") => replace = true,
                _ => {
                    return Err(item
                        .at
                        .error("a list item made of `$patch` alone must be `$patch: replace`"));
                }
            }
            continue;
        }
        items.push(item);
    }
    let named = |n: &Node<'_>| identity(field, n).is_some();
    let by_name =
        !replace && !items.is_empty() && items.iter().all(named) && base.iter().all(named);
    if !by_name {
        for item in &mut items {
            if directive_of(item)?.as_deref() == Some("delete") {
                return Err(item.at.error(format!(
                    "`$patch: delete` in a list needs items with a `{MERGE_KEY}` to find the one to delete; this list is replaced whole"
                )));
            }
            reject_directives(item)?;
        }
        *base = items;
        return Ok(());
    }
    for item in items {
        let name = identity(field, &item).expect("checked above");
        let found = base
            .iter()
            .position(|b| identity(field, b).as_deref() == Some(name.as_str()));
        let delete = directive_of(&item)?.as_deref() == Some("delete");
        match (found, delete) {
            (Some(i), true) => {
                base.remove(i);
            }
            (None, true) => {
                let names: Vec<String> = base.iter().filter_map(|b| identity(field, b)).collect();
                let hint = super::closest_hint(&name, names.iter().map(String::as_str));
                return Err(item.at.error(format!(
                    "`$patch: delete` of the item {name}, but {field} has none{hint}"
                )));
            }
            (Some(i), false) => merge_field(field, &mut base[i], item)?,
            (None, false) => {
                let mut item = item;
                reject_directives(&mut item)?;
                base.push(item);
            }
        }
    }
    Ok(())
}

/// The value of a mapping's `$patch`, checked.
fn directive_of(node: &Node<'_>) -> Result<Option<String>, ScenarioError> {
    let Value::Map(m) = &node.value else {
        return Ok(None);
    };
    let Some(e) = m.iter().find(|e| e.key == DIRECTIVE) else {
        return Ok(None);
    };
    match &e.value.value {
        Value::Scalar(s) => {
            let v = s.as_text();
            match v.as_str() {
                "replace" | "delete" | "merge" => Ok(Some(v)),
                _ => Err(e.value.at.error(format!(
                    "unknown `$patch` directive {v:?}: expected replace, delete or merge"
                ))),
            }
        }
        _ => Err(e.value.at.error("`$patch` takes replace, delete or merge")),
    }
}

/// `node` without its own `$patch` (for `$patch: replace`).
fn strip_directive<'f>(mut node: Node<'f>) -> Node<'f> {
    if let Value::Map(m) = &mut node.value {
        m.retain(|e| e.key != DIRECTIVE);
    }
    node
}

/// A value that is added or replaces one as a whole: `$patch: merge` on it is harmless and
/// goes; any other directive has nothing to act on, which is a mistake in the patch.
fn reject_directives(node: &mut Node<'_>) -> Result<(), ScenarioError> {
    match &mut node.value {
        Value::Scalar(Scalar::Null) | Value::Scalar(_) => Ok(()),
        Value::Seq(items) => {
            for i in items {
                reject_directives(i)?;
            }
            Ok(())
        }
        Value::Map(m) => {
            if let Some(e) = m.iter().find(|e| e.key.starts_with('$')) {
                let is_merge = e.key == DIRECTIVE
                    && matches!(&e.value.value, Value::Scalar(s) if s.as_text() == "merge");
                if !is_merge {
                    return Err(e.key_at.error(format!(
                        "`{}` here has nothing to act on: the base object has no value at this place to replace or delete",
                        e.key
                    )));
                }
            }
            m.retain(|e| e.key != DIRECTIVE);
            for e in m.iter_mut() {
                reject_directives(&mut e.value)?;
            }
            Ok(())
        }
    }
}
