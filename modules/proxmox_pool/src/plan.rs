//! The decision, pure: the pool as PVE shows it and the task give one write, or a
//! refusal. `comment` converges (1.6 ignored it once the pool existed); a pool with
//! members or child pools is not deleted, and the refusal names them (1.6's check saw
//! no child pools, so PVE refused the delete later).

use ferrox_cluster::pools::Member;

/// The pool now; `None` when it does not exist.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pool {
    pub comment: Option<String>,
    /// Its members, as PVE lists them.
    pub members: Vec<Member>,
    /// Its child pools (`prod/web`).
    pub children: Vec<String>,
}

/// The write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    Create { comment: Option<String> },
    Comment(String),
    Delete,
}

pub(crate) fn plan(
    poolid: &str,
    absent: bool,
    comment: Option<&str>,
    pool: Option<&Pool>,
) -> Result<Option<Action>, String> {
    match (absent, pool) {
        (false, None) => Ok(Some(Action::Create {
            comment: comment.map(str::to_string),
        })),
        (false, Some(p)) => Ok(comment
            .filter(|c| p.comment.as_deref().unwrap_or("") != *c)
            .map(|c| Action::Comment(c.to_string()))),
        (true, None) => Ok(None),
        (true, Some(p)) if !p.children.is_empty() => Err(format!(
            "Can't delete pool {poolid} with child pools ({}). Please delete them first.",
            p.children.join(", ")
        )),
        (true, Some(p)) if !p.members.is_empty() => Err(format!(
            "Can't delete pool {poolid} with members ({}). Please remove members from pool first.",
            p.members.iter().map(Member::to_string).collect::<Vec<_>>().join(", ")
        )),
        (true, Some(_)) => Ok(Some(Action::Delete)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(comment: Option<&str>, members: &[Member], children: &[&str]) -> Pool {
        Pool {
            comment: comment.map(str::to_string),
            members: members.to_vec(),
            children: children.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn comment_converges_and_an_unset_comment_is_left_alone() {
        let p = pool(Some("old"), &[], &[]);
        assert_eq!(
            plan("prod", false, Some("new"), Some(&p)),
            Ok(Some(Action::Comment("new".into())))
        );
        assert_eq!(plan("prod", false, Some("old"), Some(&p)), Ok(None));
        assert_eq!(plan("prod", false, None, Some(&p)), Ok(None));
        assert_eq!(
            plan("prod", false, Some(""), Some(&pool(None, &[], &[]))),
            Ok(None),
            "no comment and an empty one are the same to PVE"
        );
        assert_eq!(
            plan("prod", false, Some("x"), None),
            Ok(Some(Action::Create {
                comment: Some("x".into())
            }))
        );
    }

    #[test]
    fn delete_refuses_members_and_child_pools_naming_them() {
        let e = plan(
            "prod",
            true,
            None,
            Some(&pool(None, &[Member::Vm(100), Member::Storage("local".into())], &[])),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "Can't delete pool prod with members (VM 100, storage local). Please remove members from pool first."
        );
        let e = plan("prod", true, None, Some(&pool(None, &[], &["prod/web"]))).unwrap_err();
        assert_eq!(
            e,
            "Can't delete pool prod with child pools (prod/web). Please delete them first."
        );
        assert_eq!(
            plan("prod", true, None, Some(&pool(None, &[], &[]))),
            Ok(Some(Action::Delete))
        );
        assert_eq!(plan("prod", true, None, None), Ok(None));
    }
}
