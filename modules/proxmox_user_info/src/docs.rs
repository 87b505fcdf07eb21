//! The prose of the module's documentation (options are described in `spec()`).

pub(crate) fn description() -> Vec<String> {
    vec![
        "Retrieve information about one or more Proxmox VE users: their realm, whether they are enabled, their groups and API tokens.".into(),
        "Option-compatible with C(community.proxmox.proxmox_user_info); see the notes for where it differs.".into(),
    ]
}

pub(crate) fn notes() -> Vec<String> {
    vec![
        "As in community.proxmox 1.6, a O(userid) that does not exist gives an empty RV(proxmox_users), so a playbook can assert that a user exists.".into(),
        "Unlike community.proxmox 1.6, a read Proxmox VE refuses (no privilege to see the user: 403; a login or server failure) fails the task and names the cause and the privilege, instead of answering as if the user did not exist. Proxmox VE shows a user to callers with C(User.Modify) or C(Sys.Audit) on C(/access/groups), or on a group the user is in; a login with a password always sees its own user, an API token does not see its owner without those privileges.".into(),
        "Unlike community.proxmox 1.6, O(user) without O(domain) lists the users of that login name in every realm (1.6 ignored it and listed every user).".into(),
        "The listing holds only the users the caller may see (see above), as the Proxmox VE API itself filters it.".into(),
        "Requests made: one C(GET /access/users/{userid}) for one user, else one C(GET /access/users?full=1).".into(),
    ]
}

pub(crate) const EXAMPLES: &str = r#"
- name: List existing users
  ferrox.proxmox.proxmox_user_info:
    api_host: pve1.example.org
    api_user: ansible@pve
    api_token_id: automation
    api_token_secret: "{{ vault_proxmox_token_secret }}"
  register: proxmox_users

- name: List the users of the pve realm
  ferrox.proxmox.proxmox_user_info:
    domain: pve
  register: proxmox_users_pve

- name: Fail early when the VM's owner does not exist
  ferrox.proxmox.proxmox_user_info:
    userid: "{{ owner }}@ad"
  register: owner_info
  failed_when: owner_info.proxmox_users | length == 0

- name: Alternative way to retrieve information about admin@pve
  ferrox.proxmox.proxmox_user_info:
    user: admin
    domain: pve
"#;

pub(crate) const RETURN: &str = r#"
proxmox_users:
  description:
    - The users found, each as community.proxmox 1.6 returns it.
    - Empty for a O(userid) that does not exist.
  returned: always
  type: list
  elements: dict
  contains:
    userid:
      description: The user ID, C(name@realm).
      returned: always
      type: str
      sample: jdoe@ad
    user:
      description: The login name, the part of RV(proxmox_users[].userid) before C(@).
      returned: always
      type: str
      sample: jdoe
    domain:
      description: The realm, the part of RV(proxmox_users[].userid) after C(@).
      returned: always
      type: str
      sample: ad
    enabled:
      description: Whether the account is enabled.
      returned: always
      type: bool
      sample: true
    expire:
      description: Expiration date (seconds since epoch); V(0) means no expiration.
      returned: always
      type: int
      sample: 0
    groups:
      description: The groups the user is in.
      returned: always
      type: list
      elements: str
      sample: [admins]
    tokens:
      description: The user's API tokens.
      returned: always
      type: list
      elements: dict
      contains:
        tokenid:
          description: The token's name.
          type: str
          sample: automation
        privsep:
          description: Whether the token's privileges are separated from the user's.
          type: bool
          sample: true
        expire:
          description: Expiration date (seconds since epoch); V(0) means none.
          type: int
          sample: 0
        comment:
          description: The token's comment.
          type: str
    realm-type:
      description: The realm's type (V(pam), V(pve), V(ad), V(ldap), ...); only in the listing.
      returned: when listing
      type: str
      sample: ad
    comment:
      description: The user's comment.
      returned: when set
      type: str
    email:
      description: The user's e-mail address.
      returned: when set
      type: str
    firstname:
      description: The user's first name.
      returned: when set
      type: str
    lastname:
      description: The user's last name.
      returned: when set
      type: str
"#;
