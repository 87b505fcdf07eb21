//! Every PVE call of the module, paths built once (pve-storage's Status.pm and
//! Content.pm, pve-manager's Nodes.pm).

use serde_json::Value;

use ferrox_pve_client::client::{ApiError, Client};

use crate::task::Content;
use ferrox_ansible::options::read::Choice;

/// One file of a storage's content listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stored {
    pub volid: String,
    pub size: Option<u64>,
}

/// The files of `content` on the storage (`GET .../content?content=`).
pub(crate) fn listing(client: &Client, node: &str, storage: &str, content: Content) -> Result<Vec<Stored>, ApiError> {
    let data = client.get(
        &format!("/nodes/{node}/storage/{storage}/content"),
        &[("content", content.name().to_string())],
    )?;
    Ok(data
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| {
            Some(Stored {
                volid: v["volid"].as_str()?.to_string(),
                size: v["size"].as_u64(),
            })
        })
        .collect())
}

/// The node's storages (`GET /nodes/{node}/storage`): those the caller may see.
pub(crate) fn storages(client: &Client, node: &str) -> Result<Value, ApiError> {
    client.get(&format!("/nodes/{node}/storage"), &[])
}

/// The node's pve-manager version (`8.4.1`), from `GET /nodes/{node}/version`.
pub(crate) fn version(client: &Client, node: &str) -> Result<String, ApiError> {
    let data = client.get(&format!("/nodes/{node}/version"), &[])?;
    Ok(data["version"].as_str().unwrap_or_default().to_string())
}

/// What the node learns of a URL before downloading it (`GET .../query-url-metadata`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UrlMetadata {
    pub filename: Option<String>,
    pub size: Option<u64>,
    pub mimetype: Option<String>,
}

pub(crate) fn url_metadata(client: &Client, node: &str, url: &str) -> Result<UrlMetadata, ApiError> {
    let data = client.get(
        &format!("/nodes/{node}/query-url-metadata"),
        &[("url", url.to_string())],
    )?;
    let text = |k: &str| data[k].as_str().filter(|s| !s.is_empty()).map(str::to_string);
    Ok(UrlMetadata {
        filename: text("filename"),
        size: data["size"].as_u64(),
        mimetype: text("mimetype"),
    })
}

pub(crate) fn content_path(node: &str, storage: &str, volid: &str) -> String {
    format!("/nodes/{node}/storage/{storage}/content/{volid}")
}

pub(crate) fn upload_path(node: &str, storage: &str) -> String {
    format!("/nodes/{node}/storage/{storage}/upload")
}

pub(crate) fn download_path(node: &str, storage: &str) -> String {
    format!("/nodes/{node}/storage/{storage}/download-url")
}

pub(crate) fn aplinfo_path(node: &str) -> String {
    format!("/nodes/{node}/aplinfo")
}
