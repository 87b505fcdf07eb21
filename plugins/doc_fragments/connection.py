# -*- coding: utf-8 -*-
# Copyright (c) ferrox.proxmox contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Generated from the shared connection options' declaration by `cargo collection docs`; do not edit.

from __future__ import annotations


class ModuleDocFragment:
    # The connection options every module of the collection accepts.
    DOCUMENTATION = r"""
options:
  api_cert_fingerprint:
    description:
      - "SHA-256 fingerprint of the API's TLS certificate (as shown by Proxmox VE under Node > System > Certificates, C(AB:CD:...); colons and case do not
        matter). When set, the certificate is trusted if and only if its fingerprint matches, whoever signed it: the usual answer for a node's self-signed
        certificate."
      - If not set, the value of the E(PROXMOX_CERT_FINGERPRINT) environment variable is used.
      - "api_cert_fingerprint is ignored without api_host: in local mode no TLS connection is made. Remove api_cert_fingerprint, or set api_host to call the
        API over HTTPS."
    type: str
    version_added: "0.1.0"
  api_host:
    description:
      - Host name or IP address of any node of the Proxmox VE cluster. May carry a port (C(pve1:8443)); IPv6 literals are accepted with or without brackets.
      - If not set, the value of the E(PROXMOX_HOST) environment variable is used.
      - "If neither is set, the module runs in local mode, as community.proxmox's modules do without it: on the Proxmox VE node the task runs on (delegate it
        to a node with C(delegate_to)), it calls the API through C(pvesh) as C(root@pam), with no password or token. The task must run as root there (C(become:
        true) for another remote user)."
    type: str
  api_otp:
    description:
      - One-time password (TOTP) for users with two-factor authentication; only used with O(api_password).
      - If not set, the value of the E(PROXMOX_OTP) environment variable is used.
      - "api_otp is ignored without api_host: in local mode the module runs pvesh on the node as root@pam, which needs no login. Remove api_otp, or set
        api_host to log in over HTTPS."
    type: str
  api_password:
    description:
      - Password of O(api_user). When set, a ticket is requested and the token options are ignored.
      - If not set, the value of the E(PROXMOX_PASSWORD) environment variable is used.
      - "api_password is ignored without api_host: in local mode the module runs pvesh on the node as root@pam, which needs no password. Remove api_password,
        or set api_host to log in over HTTPS."
    type: str
  api_port:
    description:
      - Port of the Proxmox VE API. Defaults to C(8006) when neither this option nor O(api_host) gives a port.
      - If not set, the value of the E(PROXMOX_PORT) environment variable is used.
      - "api_port is ignored without api_host: in local mode the module runs pvesh on the node it runs on, which needs no port. Remove api_port, or set
        api_host to call the API over HTTPS."
    type: int
  api_timeout:
    description:
      - Timeout in seconds of each HTTP request to the API (connect and read). Waiting for Proxmox VE tasks is governed by the C(timeout) option of the modules
        that wait for them.
      - A request Proxmox VE did not act on (a C(503) or C(595) answer, a lock timeout, a connection refused by a node that answered before) is sent again,
        with growing pauses, for as long as the module's C(timeout) allows, or this long in modules without one.
      - If not set, the value of the E(PROXMOX_API_TIMEOUT) environment variable is used.
    type: int
    default: 5
  api_token_id:
    description:
      - Name of the API token of O(api_user), without the user part (C(automation), not C(ansible@pve!automation)).
      - If not set, the value of the E(PROXMOX_TOKEN_ID) environment variable is used.
      - "api_token_id is ignored without api_host: in local mode the module runs pvesh on the node as root@pam, which needs no token. Remove api_token_id, or
        set api_host to use the token over HTTPS."
    type: str
  api_token_secret:
    description:
      - Secret (a UUID) of the API token O(api_token_id).
      - If not set, the value of the E(PROXMOX_TOKEN_SECRET) environment variable is used.
      - "api_token_secret is ignored without api_host: in local mode the module runs pvesh on the node as root@pam, which needs no token. Remove
        api_token_secret, or set api_host to use the token over HTTPS."
    type: str
  api_user:
    description:
      - User to authenticate as, with its realm, for example C(root@pam). With token authentication, the user owning the token.
      - Defaults to C(root@pam), as on community.proxmox's main branch; in local mode (no O(api_host)) pvesh always runs as C(root@pam).
      - If not set, the value of the E(PROXMOX_USER) environment variable is used.
      - "api_user is ignored without api_host: in local mode the module runs pvesh on the node, always as root@pam. Remove api_user, or set api_host to call
        the API over HTTPS as that user."
    type: str
    default: root@pam
  ca_path:
    description:
      - PEM file with the CA certificate(s) to trust for the API's certificate instead of the built-in web PKI roots. Ignored when O(validate_certs=false).
      - If not set, the value of the E(PROXMOX_CA_PATH) environment variable is used.
      - "ca_path is ignored without api_host: in local mode no TLS connection is made. Remove ca_path, or set api_host to call the API over HTTPS."
    type: path
  validate_certs:
    description:
      - Whether to verify the TLS certificate of the API. Defaults to V(true), as in community.proxmox 2.0 (1.6 defaulted to V(false) with a deprecation
        warning).
      - For Proxmox VE's self-signed certificate, prefer O(api_cert_fingerprint) or O(ca_path) to turning verification off.
      - If not set, the value of the E(PROXMOX_VALIDATE_CERTS) environment variable is used.
    type: bool
    default: true
"""
