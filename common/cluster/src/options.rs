//! `GET /cluster/options` read at most once per task, shared by everything that needs
//! datacenter.cfg: the tag comparison (`tag-style`) and the pre-write check's tag rules
//! (`user-tag-access`, `registered-tags`, `allowed-tags`). Nothing is read until one of
//! them asks.

use std::cell::OnceCell;
use std::rc::Rc;

use serde_json::Value;

use ferrox_pve_client::client::{ApiError, Client};

/// The datacenter's options as the caller may read them; clones share one read.
#[derive(Clone)]
pub struct ClusterOptions<'a> {
    client: &'a Client,
    read: Rc<OnceCell<Result<Value, ApiError>>>,
}

impl<'a> ClusterOptions<'a> {
    /// Read through `client` when first asked.
    pub fn of(client: &'a Client) -> ClusterOptions<'a> {
        ClusterOptions {
            client,
            read: Rc::default(),
        }
    }

    /// The answer's data (read now if not yet), or the call's failure.
    pub fn get(&self) -> Result<&Value, &ApiError> {
        self.read
            .get_or_init(|| self.client.get("/cluster/options", &[]))
            .as_ref()
    }

    /// The client it reads with (for messages naming the caller).
    pub fn client(&self) -> &'a Client {
        self.client
    }
}
