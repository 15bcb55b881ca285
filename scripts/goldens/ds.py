#!/usr/bin/env python3
"""goldens/ds.py — what upstream cloud-init derives from cloudroot's datasource goldens.

Run through scripts/upstream-cloudinit.sh so that `cloudinit` is upstream's:

    CLOUDINIT_SRC=/path/to/cloud-init scripts/upstream-cloudinit.sh \
        --python scripts/goldens/ds.py [--check] [--root pkg/datasource] [NAME...]

For every case directory pkg/datasource/<name>/testdata/<case>/ of a
datasource this script knows, the case's payload (a metadata tree served
the way internal/dstest serves it, a seed directory, a config drive) is
fed through upstream's own DataSource class: the class is instantiated
with a temporary Paths and an Ubuntu distro, and its _get_data() runs with
the fetch layer mocked the way upstream's unit tests mock it —
requests.Session.request answers from the case's tree (nothing leaves the
process: a socket guard refuses any connection that is not loopback),
DMI, block devices and the kernel command line come from case.json. What
the datasource then answers (instance-id, platform, subplatform,
cloud_name, availability zone, region, local-hostname and the
hostname/fqdn get_hostname derives, public SSH keys, network_config,
userdata_raw, vendordata_raw, vendordata2_raw, get_config_obj()) is
written to testdata/<case>/upstream-26.json, which the Go tests compare
with cloudroot's Data (internal/dstest.Upstream).

The URL the fake service answers on is BASE_URL; it is written as "BASE"
in the goldens, as the Go tests write their test server's URL. --check
regenerates in memory and exits 1 when a committed golden differs.
"""

import argparse
import atexit
import base64
import contextlib
import json
import logging
import os
import shutil
import socket
import sys
import tempfile
from unittest import mock

BASE_URL = "http://127.0.0.1:9"
GOLDEN = "upstream-26.json"

# --- nothing leaves this process -------------------------------------------

_real_connect = socket.socket.connect


def _loopback_only(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and not (
        host.startswith("127.") or host in ("::1", "localhost")
    ) and self.family in (socket.AF_INET, socket.AF_INET6):
        raise OSError("ds-goldens: refusing a connection to %r" % (host,))
    return _real_connect(self, address)


socket.socket.connect = _loopback_only

import requests  # noqa: E402  (after the guard)

from cloudinit import distros, helpers, util  # noqa: E402
from cloudinit import version as ci_version  # noqa: E402
from cloudinit import sources  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

# --- the fake metadata service ---------------------------------------------


class Tree:
    """A metadata tree served as internal/dstest.Server serves it.

    A path maps to a file under root; a directory answers its `_index` file
    or a listing of its entries (directories with a trailing slash). The
    query string is ignored; anything else is 404. hook(method, path,
    headers) may answer first with (code, body) or None.
    """

    def __init__(self, root, hook=None, bases=(BASE_URL,)):
        self.root = root
        self.hook = hook
        self.bases = bases
        self.seen = []

    def answer(self, method, url, headers):
        base = next((b for b in self.bases if url.startswith(b)), None)
        if base is None:
            return 404, b""
        path, _, self.query = url[len(base):].partition("?")
        path = path or "/"
        self.seen.append((method, path))
        if self.hook:
            r = self.hook(method, path, headers or {})
            if r is not None:
                return r
        if method != "GET" or not self.root:
            return 404, b""
        p = os.path.normpath(os.path.join(self.root, path.lstrip("/")))
        if not p.startswith(os.path.normpath(self.root)) or not os.path.exists(p):
            return 404, b""
        if os.path.isfile(p):
            if path.endswith("/"):
                return 404, b""
            with open(p, "rb") as f:
                return 200, f.read()
        idx = os.path.join(p, "_index")
        if os.path.isfile(idx):
            with open(idx, "rb") as f:
                return 200, f.read()
        names = sorted(
            n + "/" if os.path.isdir(os.path.join(p, n)) else n
            for n in os.listdir(p)
        )
        return 200, "\n".join(names).encode()

    @contextlib.contextmanager
    def serving(self):
        tree = self

        def request(session, method, url, **kw):
            code, body = tree.answer(method.upper(), url, kw.get("headers"))
            r = requests.Response()
            r.status_code = code
            r._content = body
            r.url = url
            r.encoding = "utf-8"
            r.request = requests.Request(method, url).prepare()
            return r

        with mock.patch.object(requests.Session, "request", request):
            yield self


# --- the environment a datasource sees --------------------------------------

DMI_KEYS = {
    "system-manufacturer": "SysVendor",
    "system-product-name": "ProductName",
    "system-serial-number": "ProductSerial",
    "system-uuid": "ProductUUID",
    "system-version": "ProductVersion",
    "chassis-asset-tag": "ChassisAssetTag",
    "baseboard-manufacturer": "BoardVendor",
    "baseboard-product-name": "BoardName",
}


def dmi_reader(dmi):
    dmi = dmi or {}

    def read(key):
        v = dmi.get(DMI_KEYS.get(key, key))
        return v if v else None

    return read


@contextlib.contextmanager
def environment(dmi=None, cmdline="", macs=None):
    """DMI, kernel command line, NICs and sleeps of a fake machine."""
    read = dmi_reader(dmi)
    macs = macs or {}
    with contextlib.ExitStack() as st:
        st.enter_context(mock.patch("cloudinit.dmi.read_dmi_data", read))
        st.enter_context(
            mock.patch("cloudinit.util.get_cmdline", return_value=cmdline)
        )
        st.enter_context(
            mock.patch("cloudinit.util.is_resolvable_url", return_value=True)
        )
        st.enter_context(
            mock.patch("cloudinit.util.find_devs_with", return_value=[])
        )
        st.enter_context(
            mock.patch(
                "cloudinit.net.get_interfaces_by_mac",
                return_value=dict(macs),
            )
        )
        st.enter_context(
            mock.patch(
                "cloudinit.net.find_fallback_nic", return_value="eth0"
            )
        )
        st.enter_context(mock.patch("time.sleep"))
        yield


_TMPDIRS = []


def tmpdir(prefix):
    """A temporary directory removed when the script ends."""
    d = tempfile.mkdtemp(prefix=prefix)
    _TMPDIRS.append(d)
    return d


atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True)
                         for d in _TMPDIRS])


def make_ds(cls, sys_cfg=None):
    tmp = tmpdir("ds-goldens-")
    paths = helpers.Paths(
        {
            "cloud_dir": os.path.join(tmp, "cloud"),
            "run_dir": os.path.join(tmp, "run"),
            "seed_dir": os.path.join(tmp, "seed"),
        }
    )
    cfg = {"datasource": {}, "system_info": {"default_user": {"name": "ubuntu"}}}
    if sys_cfg:
        cfg = util.mergemanydict([sys_cfg, cfg])
    distro_cls = distros.fetch("ubuntu")
    distro = distro_cls("ubuntu", {}, paths)
    # Not netplan: Ec2 adds policy routing only for netplan.
    type(distro).network_renderer = property(lambda self: None)
    distro.fallback_interface = "eth0"
    # The fake machine's fallback network config (not this host's NICs).
    distro.generate_fallback_config = lambda: {
        "version": 2, "ethernets": {"eth0": {
            "dhcp4": True, "dhcp6": True, "set-name": "eth0",
            "match": {"macaddress": "52:54:00:00:00:01"}}}}
    return cls(cfg, distro, paths)


def text(v):
    if v is None:
        return None
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(v).decode()}
    return v


def plain(v):
    """v as JSON can hold it (bytes as text, sets as sorted lists)."""
    if isinstance(v, dict):
        return {str(k): plain(e) for k, e in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(e) for e in v]
    if isinstance(v, set):
        return sorted(plain(e) for e in v)
    if isinstance(v, bytes):
        return text(v)
    return v


def get_data(ds):
    """ds._get_data(), an exception recorded as not found (upstream's
    get_data lets it propagate: the datasource fails)."""
    try:
        return bool(ds._get_data())
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)


def answer(ds, found, macs=None, extra=None):
    """What upstream's datasource answers, as upstream-26.json holds it."""
    out = {"upstream": ci_version.version_string(), "dsname": ds.dsname,
           "found": found is True}
    if found is not True:
        if found:
            out["error"] = found
        return out

    def get(f):
        try:
            return f()
        except Exception as e:  # recorded: the Go test skips the field
            return {"error": "%s: %s" % (type(e).__name__, e)}

    md = ds.metadata or {}
    out["instance_id"] = get(ds.get_instance_id)
    out["platform"] = get(lambda: ds.platform_type)
    out["subplatform"] = get(lambda: ds.subplatform)
    out["cloud_name"] = get(lambda: ds.cloud_name)
    out["availability_zone"] = get(lambda: ds.availability_zone)
    out["region"] = get(lambda: ds.region)
    lh = md.get("local-hostname") if isinstance(md, dict) else None
    out["local_hostname"] = plain(lh)
    h = get(lambda: ds.get_hostname(fqdn=False, metadata_only=True))
    f = get(lambda: ds.get_hostname(fqdn=True, metadata_only=True))
    out["hostname"] = h if isinstance(h, dict) else h.hostname
    out["fqdn"] = f if isinstance(f, dict) else f.hostname
    out["public_keys"] = plain(get(ds.get_public_ssh_keys))
    out["network_config"] = plain(get(lambda: ds.network_config))
    out["os_interfaces"] = dict(macs or {})
    out["userdata_raw"] = plain(ds.userdata_raw)
    out["vendordata_raw"] = plain(ds.vendordata_raw)
    out["vendordata2_raw"] = plain(getattr(ds, "vendordata2_raw", None))
    out["config_obj"] = plain(get(ds.get_config_obj)) or None
    if extra:
        out.update(extra)
    return out


def read_case(case):
    p = os.path.join(case, "case.json")
    if os.path.exists(p):
        with open(p) as f:
            return json.load(f)
    return {}


# --- the datasources --------------------------------------------------------


def drive_ec2(case):
    from cloudinit.sources import DataSourceEc2 as m

    spec = read_case(case)
    token = "AQAEAFcloudroot-test-token=="

    def hook(method, path, headers):
        if path == "/latest/api/token":
            if method != "PUT" or spec.get("imds") == "v1":
                return 405, b""
            return 200, token.encode()
        got = headers.get("X-aws-ec2-metadata-token")
        if isinstance(got, bytes):  # requests sends bytes as they are
            got = got.decode()
        if spec.get("imds") == "v2" and got != token:
            return 401, b""
        return None

    macs = {}
    for v in os.listdir(os.path.join(case, "tree")):
        d = os.path.join(case, "tree", v, "meta-data/network/interfaces/macs")
        if os.path.isdir(d):
            macs = {
                mac: "eth%d" % i for i, mac in enumerate(sorted(os.listdir(d)))
            }
    ds_cfg = {"metadata_urls": [BASE_URL], "max_wait": 2, "timeout": 1}
    ds_cfg.update(spec.get("config") or {})
    cfg = {"datasource": {"Ec2": ds_cfg}}
    if "strict_id" in ds_cfg:
        cfg["datasource"]["Ec2"]["strict_id"] = ds_cfg["strict_id"]
    with environment(spec.get("dmi"), macs=macs), mock.patch(
        "cloudinit.util.load_text_file", side_effect=_no_hypervisor_uuid
    ), Tree(os.path.join(case, "tree"), hook).serving():
        ds = make_ds(m.DataSourceEc2, cfg)
        found = get_data(ds)
        return answer(ds, found, macs)


_real_load_text_file = util.load_text_file


def _no_hypervisor_uuid(path, *a, **kw):
    if str(path).startswith("/sys/hypervisor"):
        raise FileNotFoundError(path)
    return _real_load_text_file(path, *a, **kw)


def drive_openstack(case):
    from cloudinit.sources import DataSourceOpenStack as m

    cfg = {"datasource": {"OpenStack": {"metadata_urls": [BASE_URL],
                                        "max_wait": 2, "timeout": 1}}}
    # Upstream reads the EC2 half from the default address whatever
    # metadata_urls says (openstack.MetadataReader: get_instance_metadata
    # without a base): the tree answers there too, inside this process.
    bases = (BASE_URL, "http://169.254.169.254")
    with environment(), Tree(os.path.join(case, "tree"), bases=bases).serving():
        ds = make_ds(m.DataSourceOpenStack, cfg)
        found = get_data(ds)
        return answer(ds, found)


def drive_configdrive(case):
    from cloudinit.sources import DataSourceConfigDrive as m

    drive = os.path.join(case, "drive")
    with environment(), mock.patch.object(
        m, "find_candidate_devs", return_value=["/dev/sr0"]
    ), mock.patch.object(
        m.util, "mount_cb", lambda dev, f, *a, **kw: f(drive)
    ), mock.patch.object(m, "on_first_boot"):
        ds = make_ds(m.DataSourceConfigDrive)
        ds.seed_dir = os.path.join(case, "no-seed-dir")
        found = get_data(ds)
        return answer(ds, found)


def drive_nocloud(case):
    from cloudinit.sources import DataSourceNoCloud as m

    spec = read_case(case)
    seed = os.path.abspath(os.path.join(case, "seed"))
    with environment(spec.get("dmi"), cmdline=spec.get("cmdline", "")):
        ds = make_ds(m.DataSourceNoCloud)
        ds.seed_dirs = [seed]
        found = get_data(ds)
        out = answer(ds, found)
    return json.loads(json.dumps(out).replace(seed, "SEED"))


def drive_gce(case):
    from cloudinit.sources import DataSourceGCE as m

    spec = read_case(case)
    base = BASE_URL + "/computeMetadata/v1/"
    sys_cfg = {"datasource": {"GCE": {"metadata_url": base}}}
    if spec.get("default_user"):
        sys_cfg["system_info"] = {"default_user": {"name": spec["default_user"]}}

    def hook(method, path, headers):
        if headers.get("Metadata-Flavor") != "Google":
            return 403, b""
        return None

    with environment(), mock.patch.object(
        m, "platform_reports_gce", return_value=True
    ), Tree(os.path.join(case, "tree"), hook).serving():
        ds = make_ds(m.DataSourceGCE, sys_cfg)
        if spec.get("default_user"):
            ds.default_user = spec["default_user"]
        found = get_data(ds)
        return answer(ds, found)


def drive_digitalocean(case):
    from cloudinit.sources import DataSourceDigitalOcean as m

    url = BASE_URL + "/metadata/v1.json"
    cfg = {"datasource": {"DigitalOcean": {"metadata_url": url, "retries": 0,
                                           "use_ip4LL": False}}}
    with environment(), Tree(os.path.join(case, "tree")).serving():
        ds = make_ds(m.DataSourceDigitalOcean, cfg)
        with mock.patch.object(ds, "_get_sysinfo", return_value=(True, "0")):
            found = get_data(ds)
        return answer(ds, found)


def hetzner_nics(case):
    """The fake machine's NICs for a Hetzner case: one for each MAC of its
    network-config, then of its private networks (which 26.x names with
    get_interface_name_from_mac)."""
    import yaml

    md_dir = os.path.join(case, "tree", "hetzner", "v1", "metadata")
    macs = []
    with open(os.path.join(md_dir, "_index")) as f:
        md = yaml.safe_load(f) or {}
    for c in ((md.get("network-config") or {}).get("config") or []):
        if isinstance(c, dict):
            macs.append(c.get("mac_address"))
    pn = os.path.join(md_dir, "private-networks")
    if os.path.exists(pn):
        with open(pn) as f:
            for n in yaml.safe_load(f) or []:
                if isinstance(n, dict):
                    macs.append(n.get("mac_address"))
    return nic_names(macs)


def drive_hetzner(case):
    from cloudinit.sources import DataSourceHetzner as m

    spec = read_case(case)
    macs = hetzner_nics(case)
    with environment(macs=macs), mock.patch.object(
        m, "get_hcloud_data", return_value=(True, spec.get("serial"))
    ), mock.patch.object(m, "base_urls_v1", return_value=[BASE_URL + "/hetzner/v1/"]), \
            mock.patch.object(m, "EphemeralIPNetwork"), \
            Tree(os.path.join(case, "tree")).serving():
        ds = make_ds(m.DataSourceHetzner, {"datasource": {"Hetzner": {
            "max_wait": 1, "timeout": 1, "retries": 0}}})
        found = get_data(ds)
        return answer(ds, found, macs)


def nic_names(macs):
    """The fake machine's NICs: eth0, eth1... for macs in order."""
    out = {}
    for mac in macs:
        if isinstance(mac, str) and mac.lower() not in out:
            out[mac.lower()] = "eth%d" % len(out)
    return out


def drive_vultr(case):
    from cloudinit.sources import DataSourceVultr as m
    from cloudinit.sources.helpers import vultr

    with open(os.path.join(case, "tree", "v1.json")) as f:
        v1 = json.load(f)
    ifaces = []
    for k in ("interfaces", "cloud_interfaces"):
        if isinstance(v1.get(k), list):
            ifaces += v1[k]
    macs = nic_names(i.get("mac") for i in ifaces if isinstance(i, dict))

    cfg = {"datasource": {"Vultr": {"url": BASE_URL, "retries": 0,
                                    "timeout": 1, "wait": 0}}}
    with environment(macs=macs), mock.patch.object(
        vultr, "get_interface_list", return_value=["eth0"]
    ), mock.patch.object(vultr, "EphemeralDHCPv4"), mock.patch.object(
        vultr, "is_vultr", return_value=True
    ), Tree(os.path.join(case, "tree")).serving():
        ds = make_ds(m.DataSourceVultr, cfg)
        found = get_data(ds)
        return answer(ds, found, macs)


def drive_upcloud(case):
    from cloudinit.sources import DataSourceUpCloud as m

    spec = read_case(case)
    url = BASE_URL + "/metadata/v1.json"
    cfg = {"datasource": {"UpCloud": {"metadata_url": url, "retries": 0}}}
    with open(os.path.join(case, "tree", "metadata", "v1.json")) as f:
        md = json.load(f)
    macs = nic_names(
        i.get("mac")
        for i in ((md.get("network") or {}).get("interfaces") or [])
        if isinstance(i, dict)
    )
    with environment(macs=macs), Tree(os.path.join(case, "tree")).serving():
        ds = make_ds(m.DataSourceUpCloud, cfg)
        uuid = spec.get("product_uuid") or "00000000-0000-0000-0000-000000000000"
        with mock.patch.object(ds, "_get_sysinfo", return_value=(True, uuid)):
            found = get_data(ds)
        return answer(ds, found, macs)


def drive_exoscale(case):
    from cloudinit.sources import DataSourceExoscale as m

    spec = read_case(case)

    def hook(method, path, headers):
        req = headers.get("DomU_Request")
        if req == "send_my_password":
            return 200, (spec.get("password_reply") or "").encode()
        if req == "saved_password":
            return 200, b"saved_password"
        return None

    # The password server is metadata_url:port, so metadata_url has no
    # port here; the fake answers the password server by its header.
    base = "http://127.0.0.1"
    cfg = {"datasource": {"Exoscale": {"metadata_url": base,
                                       "password_server_port": 8080,
                                       "timeout": 1, "retries": 0,
                                       "max_wait": 1}}}
    with environment(), Tree(os.path.join(case, "tree"), hook,
                             bases=(base,)).serving():
        ds = make_ds(m.DataSourceExoscale, cfg)
        found = get_data(ds)
        return answer(ds, found)


def drive_akamai(case):
    from cloudinit.sources import DataSourceAkamai as m

    spec = read_case(case)
    token = "cloudroot-akamai-token"

    def hook(method, path, headers):
        if path == "/v1/token":
            return (200, token.encode()) if method == "PUT" else (405, b"")
        if headers.get("Metadata-Token") != token:
            return 401, b""
        return None

    cfg = {"datasource": {"Akamai": {"base_urls": {
        "ipv4": BASE_URL, "ipv6": "http://[::1]:9"}}}}
    with environment(), mock.patch.object(
        m, "is_on_akamai", return_value=True
    ), mock.patch.object(
        m, "get_local_instance_id", return_value=spec.get("serial") or ""
    ), Tree(os.path.join(case, "tree"), hook).serving():
        ds = make_ds(m.DataSourceAkamai, cfg)
        with mock.patch.object(
            ds, "_get_network_context_managers",
            return_value=[(contextlib.nullcontext(), False)],
        ):
            found = get_data(ds)
        return answer(ds, found)


def drive_scaleway(case):
    from cloudinit.sources import DataSourceScaleway as m

    with open(os.path.join(case, "tree", "conf")) as f:
        conf = json.load(f)
    # The DHCP lease gives the primary (first IPv4) public address, which
    # the network config then configures with DHCP.
    fixed = next((ip["address"] for ip in conf.get("public_ips") or []
                  if ip.get("family") == "inet"), None)

    class Lease:
        def __init__(self, *a, **kw):
            pass

        def __enter__(self):
            return {"fixed-address": fixed}

        def __exit__(self, *a):
            return False

    cfg = {"datasource": {"Scaleway": {"metadata_urls": [BASE_URL],
                                       "retries": 2, "timeout": 1,
                                       "max_wait": 1}}}
    with environment(), mock.patch.object(m, "EphemeralDHCPv4", Lease), \
            mock.patch.object(m, "DS_BASE_URLS", []), mock.patch(
                "socket.getaddrinfo",
                return_value=[(socket.AF_INET, 1, 6, "", ("127.0.0.1", 9))],
            ), Tree(os.path.join(case, "tree")).serving():
        ds = make_ds(m.DataSourceScaleway, cfg)
        ds.metadata_urls = [BASE_URL]
        found = get_data(ds)
        return answer(ds, found)


def drive_aliyun(case):
    from cloudinit.sources import DataSourceAliYun as m

    token = "AQAEAliyunTestToken=="
    tokened = os.path.basename(case) == "token"  # the Go test's hook

    def hook(method, path, headers):
        if path == "/latest/api/token":
            if method != "PUT" or not tokened:
                return 404, b""
            return 200, token.encode()
        got = headers.get("X-aliyun-ecs-metadata-token")
        if isinstance(got, bytes):
            got = got.decode()
        if tokened and got != token:
            return 403, b"forbidden"
        return None

    cfg = {"datasource": {"AliYun": {"metadata_urls": [BASE_URL],
                                     "max_wait": 2, "timeout": 1}}}
    with environment({"ProductName": "Alibaba Cloud ECS"}), \
            Tree(os.path.join(case, "tree"), hook).serving():
        ds = make_ds(m.DataSourceAliYun, cfg)
        found = get_data(ds)
        return answer(ds, found)


def drive_bigstep(case):
    from cloudinit.sources import DataSourceBigstep as m

    url = BASE_URL + "/metadata/document"
    with environment(), Tree(os.path.join(case, "tree")).serving():
        ds = make_ds(m.DataSourceBigstep)
        seed = os.path.join(ds.paths.cloud_dir, "data", "seed", "bigstep")
        os.makedirs(seed, exist_ok=True)
        with open(os.path.join(seed, "url"), "w") as f:
            f.write(url + "\n")
        found = get_data(ds)
        return answer(ds, found)


def drive_cloudcix(case):
    from cloudinit.sources import DataSourceCloudCIX as m

    with environment({"ProductName": "CloudCIX"}), mock.patch.object(
        m, "METADATA_URLS", [BASE_URL]
    ), Tree(os.path.join(case, "tree")).serving():
        ds = make_ds(m.DataSourceCloudCIX)
        found = get_data(ds)
        return answer(ds, found)


def drive_nwcs(case):
    from cloudinit.sources import DataSourceNWCS as m

    url = BASE_URL + "/api/v1/metadata"
    cfg = {"datasource": {"NWCS": {"metadata_url": url, "retries": 0}}}
    with environment(), mock.patch.object(m, "EphemeralDHCPv4"), \
            Tree(os.path.join(case, "tree")).serving():
        ds = make_ds(m.DataSourceNWCS, cfg)
        found = get_data(ds)
        return answer(ds, found)


def drive_lxd(case):
    from cloudinit.sources import DataSourceLXD as m

    with environment(), Tree(os.path.join(case, "socket"),
                             bases=("http://lxd",)).serving():
        ds = make_ds(m.DataSourceLXD)
        found = get_data(ds)
        return answer(ds, found)


@contextlib.contextmanager
def one_device(m, dev, disk):
    """dev is the only device found, and mounting it shows disk."""
    def mount_cb(device, callback, data=None, *a, **kw):
        if device != dev:
            raise m.util.MountFailedError(device)
        return callback(disk) if data is None else callback(disk, data)

    with mock.patch("cloudinit.util.find_devs_with",
                    side_effect=lambda *a, **kw: [dev]), \
            mock.patch("cloudinit.util.mount_cb", mount_cb), \
            mock.patch("cloudinit.util.mounts", return_value={}):
        yield


def drive_opennebula(case):
    from cloudinit.sources import DataSourceOpenNebula as m

    disk = os.path.join(case, "disk")
    macs = {}
    with open(os.path.join(disk, "context.sh")) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            if k.startswith("ETH") and k.endswith("_MAC"):
                macs[v.strip("'\"").lower()] = "eth" + k[3:-4]
    # parseuser None: context.sh is read with bash as this user, not
    # through sudo -u nobody.
    cfg = {"datasource": {"OpenNebula": {"parseuser": None}}}
    with environment(macs=macs), one_device(m, "/dev/sr0", disk), \
            mock.patch.object(m, "get_physical_nics_by_mac",
                              return_value=dict(macs)):
        ds = make_ds(m.DataSourceOpenNebula, cfg)
        ds.seed_dir = os.path.join(case, "no-seed-dir")
        found = get_data(ds)
        return answer(ds, found, macs)


def drive_ovf(case):
    from cloudinit.sources import DataSourceOVF as m

    disk = os.path.join(case, "disk")
    with environment(), one_device(m, "/dev/sr0", disk), mock.patch.object(
        m, "transport_vmware_guestinfo", return_value=False
    ), mock.patch.object(m, "maybe_cdrom_device", return_value=True):
        ds = make_ds(m.DataSourceOVF)
        found = get_data(ds)
        return answer(ds, found)


def drive_rbxcloud(case):
    from cloudinit.sources import DataSourceRbxCloud as m

    disk = os.path.join(case, "disk")
    real_isfile = os.path.isfile

    def isfile(p):  # the target has no /etc/hosts, as in the Go test
        return False if p == "/etc/hosts" else real_isfile(p)

    with environment(), one_device(m, "/dev/vdb", disk), \
            mock.patch.object(m.os.path, "isfile", isfile):
        ds = make_ds(m.DataSourceRbxCloud)
        found = get_data(ds)
        return answer(ds, found)


def drive_altcloud(case):
    from cloudinit.sources import DataSourceAltCloud as m

    disk = os.path.join(case, "disk")
    with environment({"ProductName": "VMware Virtual Platform"}), \
            one_device(m, "/dev/sr0", disk), mock.patch.object(
                m, "CLOUD_INFO_FILE", os.path.join(case, "no-cloud-info")):
        ds = make_ds(m.DataSourceAltCloud)
        found = get_data(ds)
        return answer(ds, found)


def drive_ibmcloud(case):
    from cloudinit.sources import DataSourceIBMCloud as m

    spec = read_case(case)
    disk = os.path.join(case, "disk")
    if spec.get("label", "").lower() == "config-2":
        platform = m.Platforms.OS_CODE
    else:
        platform = m.Platforms.TEMPLATE_LIVE_METADATA
    with environment(), one_device(m, "/dev/xvdh", disk), mock.patch.object(
        m, "get_ibm_platform", return_value=(platform, "/dev/xvdh")
    ), mock.patch.object(m, "_read_system_uuid", return_value=None):
        ds = make_ds(m.DataSourceIBMCloud)
        found = get_data(ds)
        return answer(ds, found)


def drive_oracle(case):
    from cloudinit.sources import DataSourceOracle as m

    import glob

    spec = read_case(case)
    run = os.path.join(case, "run")
    # klibc's state files: the case's run/ (cloudroot's RunDir); an iSCSI
    # root (upstream asks iBFT) is a case that has them.
    klibc = sorted(glob.glob(os.path.join(run, "net-*.conf")))
    iscsi = bool(klibc)
    tree = os.path.join(case, "tree")
    if spec.get("tree"):
        tree = os.path.join(os.path.dirname(case), spec["tree"], "tree")
    # The Go test's machine.
    macs = {"02:00:17:00:00:01": "ens3", "02:00:17:00:00:02": "ens4"}
    cfg = {"datasource": {"Oracle": {}}}
    if spec.get("configure_secondary_nics") is not None:
        cfg["datasource"]["Oracle"]["configure_secondary_nics"] = \
            spec["configure_secondary_nics"]
    v4 = BASE_URL + "/opc/v{version}/"
    with environment({"ChassisAssetTag": "OracleCloud.com"}, macs=macs), \
            mock.patch.object(m, "IPV4_METADATA_ROOT", v4), \
            mock.patch.object(m, "IPV4_METADATA_PATTERN", v4 + "{path}/"), \
            mock.patch.object(m, "IPV6_METADATA_PATTERN",
                              "http://[::1]:9/opc/v{version}/{path}/"), \
            mock.patch.object(m, "get_interfaces_by_mac",
                              return_value=dict(macs)), \
            mock.patch.object(m, "_read_system_uuid", return_value=None), \
            mock.patch.object(m, "_ibft_has_iscsi_boot_target",
                              return_value=iscsi), \
            Tree(tree).serving():
        ds = make_ds(m.DataSourceOracle, cfg)
        ds._network_config_source = m.KlibcOracleNetworkConfigSource(
            _files=klibc, _cmdline=spec.get("cmdline", ""),
            _mac_addrs={name: mac for mac, name in macs.items()})
        found = get_data(ds)
        return answer(ds, found, macs)


def drive_cloudstack(case):
    from cloudinit.sources import DataSourceCloudStack as m

    spec = read_case(case)

    def hook(method, path, headers):
        req = headers.get("DomU_Request")
        if req == "send_my_password":
            return 200, (spec.get("password_reply") or "").encode()
        if req == "saved_password":
            return 200, b"saved_password"
        return None

    # The virtual router is a bare address (the password server is on
    # its port 8080); the fake answers the password server by its header.
    host = "http://127.0.0.1"
    with environment(), mock.patch.object(
        m, "get_vr_address", return_value="127.0.0.1"
    ), Tree(os.path.join(case, "tree"), hook, bases=(host,)).serving():
        ds = make_ds(m.DataSourceCloudStack, {"datasource": {"CloudStack": {
            "max_wait": 2, "timeout": 1}}})
        ds.seed_dir = os.path.join(case, "no-seed-dir")
        with mock.patch.object(ds, "_get_domainname", return_value=""):
            found = get_data(ds)
            out = answer(ds, found)
    if isinstance(out.get("subplatform"), str):
        out["subplatform"] = out["subplatform"].replace(host, BASE_URL)
    return out


def drive_maas(case):
    from cloudinit.sources import DataSourceMAAS as m

    seed = os.path.abspath(os.path.join(case, "seed"))
    if os.path.isdir(seed):
        with environment():
            ds = make_ds(m.DataSourceMAAS)
            ds.seed_dir = seed
            found = get_data(ds)
            out = answer(ds, found)
        # The Go test puts the seed at the target's seed directory.
        return json.loads(json.dumps(out).replace(
            seed, "/var/lib/cloud/seed/maas"))
    cfg = {"datasource": {"MAAS": {
        "metadata_url": BASE_URL + "/MAAS/metadata/", "consumer_key": "ck",
        "token_key": "tk", "token_secret": "ts", "max_wait": 2,
        "timeout": 1}}}
    with environment(), Tree(os.path.join(case, "tree")).serving():
        ds = make_ds(m.DataSourceMAAS, cfg)
        ds.seed_dir = os.path.join(case, "no-seed-dir")
        found = get_data(ds)
        return answer(ds, found)


def drive_cloudsigma(case):
    from cloudinit.sources import DataSourceCloudSigma as m
    from cloudinit.sources.helpers import cloudsigma

    with open(os.path.join(case, "reply"), "rb") as f:
        line = f.readline()

    def execute(self):  # what CepkoResult._execute reads from the port
        return line.strip(b"\x04\n").decode("ascii")

    with environment(), mock.patch.object(
        cloudsigma.CepkoResult, "_execute", execute
    ):
        ds = make_ds(m.DataSourceCloudSigma)
        found = get_data(ds)
        return answer(ds, found)


def drive_smartos(case):
    from cloudinit.sources import DataSourceSmartOS as m

    spec = read_case(case)
    with open(os.path.join(case, "metadata.json")) as f:
        values = json.load(f)

    def request(self, rtype, param=None):  # the metadata service's answers
        if rtype == "KEYS":
            return "\n".join(sorted(values))
        if rtype == "GET":
            return values.get(param)
        return None

    kvm = spec.get("mode") == "kvm"
    stype = m.SMARTOS_ENV_KVM if kvm else m.SMARTOS_ENV_LX_BRAND
    legacy = tmpdir("ds-goldens-legacy-")
    cfg = {"datasource": {"SmartOS": dict(spec.get("config") or {})}}
    with environment({"ProductName": spec.get("product_name", "")}), \
            mock.patch.object(m, "get_smartos_environ", return_value=stype), \
            mock.patch.object(m.JoyentMetadataClient, "request", request), \
            mock.patch.object(m.JoyentMetadataSocketClient, "exists",
                              return_value=True), \
            mock.patch.object(m.JoyentMetadataSerialClient, "exists",
                              return_value=True), \
            mock.patch.object(m.JoyentMetadataSocketClient, "open_transport"), \
            mock.patch.object(m.JoyentMetadataSerialClient, "open_transport"), \
            mock.patch.object(m.JoyentMetadataClient, "close_transport"), \
            mock.patch.object(m, "LEGACY_USER_D", legacy):
        ds = make_ds(m.DataSourceSmartOS, cfg)
        with mock.patch.object(ds, "_set_provisioned"):
            found = get_data(ds)
        out = answer(ds, found)
        cloud = ds.paths.cloud_dir
    # The builtin vendor-data names the scripts under the cloud dir.
    return json.loads(json.dumps(out).replace(cloud, "/var/lib/cloud"))


def drive_vmware(case):
    from cloudinit.sources import DataSourceVMware as m
    from cloudinit.subp import ProcessExecutionError

    spec = read_case(case)
    if os.path.isdir(os.path.join(case, "imc")):
        # Guest customization: upstream waits for the cust.cfg of a
        # deployPkg run; not fed here.
        return None
    gi = os.path.join(case, "guestinfo")

    def rpctool(tool, arg):  # vmware-rpctool answering from guestinfo/
        verb, _, key = arg.partition(" ")
        if verb != "info-get":
            return "", ""
        p = os.path.join(gi, key[len("guestinfo."):])
        if not os.path.isfile(p):
            raise ProcessExecutionError(stdout="", stderr=m.NOVAL,
                                        exit_code=1, cmd=[tool, arg])
        with open(p) as f:
            return f.read(), ""

    environ = dict(spec.get("environ") or {})
    on_vmware = bool((spec.get("dmi") or {}).get("ProductName"))
    tools = {"vmware-rpctool": "/usr/bin/vmware-rpctool"} \
        if os.path.isdir(gi) else {}
    uuid = (spec.get("dmi") or {}).get("ProductUUID", "")

    def load_text_file(path, *a, **kw):  # the fake machine's DMI
        if path == m.PRODUCT_UUID_FILE_PATH:
            return uuid + "\n"
        return _real_load_text_file(path, *a, **kw)

    with environment(spec.get("dmi")), \
            mock.patch.object(m.util, "load_text_file", load_text_file), \
            mock.patch.dict(os.environ, environ), \
            mock.patch.object(m, "which", side_effect=tools.get), \
            mock.patch.object(m, "exec_vmware_rpctool", rpctool), \
            mock.patch.object(m, "is_vmware_platform",
                              return_value=on_vmware):
        ds = make_ds(m.DataSourceVMware)
        found = get_data(ds)
        return answer(ds, found)


def drive_azure(case):
    """The password is hashed with the Go test's fixed salt, so the
    hashes compare."""
    import warnings
    from urllib.parse import parse_qs

    warnings.simplefilter("ignore", DeprecationWarning)

    from cloudinit.sources import DataSourceAzure as m
    from cloudinit.sources.azure import imds

    spec = read_case(case)
    tree = os.path.join(case, "tree")
    have_imds = os.path.isdir(tree)
    if spec.get("ovf") == "udf" or not (have_imds or spec.get("ovf")):
        # A UDF image upstream would mount, or nothing but IMDS retries.
        return None
    versions = spec.get("api_versions") or []
    t = Tree(tree if have_imds else "", bases=(BASE_URL,))

    def hook(method, path, headers):
        if headers.get("Metadata") != "true":
            return 400, b'{"error": "Bad request. Required metadata header"}'
        v = parse_qs(t.query).get("api-version", [""])[0]
        if v not in versions:
            return 400, b'{"error": "Bad request. api-version is invalid"}'
        return None

    t.hook = hook
    work = tmpdir("ds-goldens-azure-")
    ovf = os.path.join(case, "ovf-env.xml")
    placeholder = {"device": "/dev/sr0", "seed": "/var/lib/cloud/seed/azure",
                   "datadir": "/var/lib/waagent"}.get(spec.get("ovf"))
    src = None
    if placeholder:
        src = os.path.join(work, "ovf")
        os.makedirs(src)
        shutil.copy(ovf, src)
    dmi = {} if spec.get("not_azure") else {
        "ChassisAssetTag": "7783-7084-3265-9085-8269-3286-77",
        "SysVendor": "Microsoft Corporation"}
    if spec.get("uuid"):
        dmi["ProductUUID"] = spec["uuid"]
    elif have_imds and not spec.get("not_azure"):
        # Upstream requires a DMI system uuid; a case without one is a
        # Gen2 VM whose uuid is IMDS's vmId (what cloudroot falls back to).
        with open(os.path.join(tree, "metadata", "instance")) as f:
            dmi["ProductUUID"] = json.load(f)["compute"]["vmId"]
    cfg = {"datasource": {"Azure": dict(spec.get("config") or {})}}
    if spec.get("ovf") == "datadir":
        cfg["datasource"]["Azure"]["data_dir"] = src

    def mount_cb(device, callback, *a, **kw):
        if device != "/dev/sr0" or spec.get("ovf") != "device":
            raise m.util.MountFailedError(device)
        return callback(src)

    def setup_net(self, *a, **kw):  # the ephemeral DHCP lease
        if have_imds:
            self._ephemeral_dhcp_ctx = mock.Mock(lease={"interface": "eth0"})

    fallback = {"version": 2, "ethernets": {"eth0": {
        "dhcp4": True, "match": {"driver": "hv_netvsc",
                                 "macaddress": "00:0d:3a:00:00:01"},
        "set-name": "eth0"}}}
    import crypt  # noqa: E402 (deprecated, still in Debian's python3)

    real_exists = os.path.exists

    def exists(p):  # the case's resource disk (its sysfs layout)
        if p == m.RESOURCE_DISK_PATH:
            return bool(spec.get("sys"))
        return real_exists(p)

    with environment(dmi), t.serving(), \
            mock.patch.object(imds, "IMDS_URL", BASE_URL + "/metadata"), \
            mock.patch.object(m.os.path, "exists", exists), \
            mock.patch.object(m, "hash_password",
                              lambda pw: crypt.crypt(pw, "$6$cloudroottests$")), \
            mock.patch.object(m, "get_boot_telemetry"), \
            mock.patch.object(m, "get_system_info"), \
            mock.patch.object(m, "write_files"), \
            mock.patch.object(m, "_get_random_seed", return_value=None), \
            mock.patch.object(m, "get_hv_netvsc_macs_normalized",
                              return_value=[]), \
            mock.patch.object(m, "_generate_network_config_from_fallback_config",
                              return_value=fallback), \
            mock.patch.object(m, "list_possible_azure_ds",
                              side_effect=lambda seed, ddir: [
                                  x for x in (seed, "/dev/sr0", ddir) if x]), \
            mock.patch("cloudinit.util.mount_cb", mount_cb), \
            mock.patch.object(m.DataSourceAzure,
                              "_setup_ephemeral_networking", setup_net), \
            mock.patch.object(m.DataSourceAzure,
                              "_teardown_ephemeral_networking"), \
            mock.patch.object(m.DataSourceAzure, "_report_ready",
                              return_value=None), \
            mock.patch.object(m.DataSourceAzure, "_report_failure"), \
            mock.patch.object(m.DataSourceAzure, "_cleanup_markers"):
        ds = make_ds(m.DataSourceAzure, cfg)
        ds.seed_dir = src if spec.get("ovf") == "seed" else os.path.join(
            work, "no-seed")
        if spec.get("previous_iid"):
            d = ds.paths.get_cpath("data")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "instance-id"), "w") as f:
                f.write(spec["previous_iid"] + "\n")
        found = get_data(ds)
        out = answer(ds, found)
    out = json.loads(json.dumps(out).replace(src, placeholder)) if src \
        else out
    shutil.rmtree(work, ignore_errors=True)
    return out


DRIVERS = {
    "nocloud": drive_nocloud,
    "configdrive": drive_configdrive,
    "openstack": drive_openstack,
    "ec2": drive_ec2,
    "gce": drive_gce,
    "digitalocean": drive_digitalocean,
    "hetzner": drive_hetzner,
    "vultr": drive_vultr,
    "scaleway": drive_scaleway,
    "upcloud": drive_upcloud,
    "exoscale": drive_exoscale,
    "akamai": drive_akamai,
    "aliyun": drive_aliyun,
    "bigstep": drive_bigstep,
    "cloudcix": drive_cloudcix,
    "nwcs": drive_nwcs,
    "lxd": drive_lxd,
    "opennebula": drive_opennebula,
    "ovf": drive_ovf,
    "rbxcloud": drive_rbxcloud,
    "altcloud": drive_altcloud,
    "ibmcloud": drive_ibmcloud,
    "oracle": drive_oracle,
    "cloudstack": drive_cloudstack,
    "maas": drive_maas,
    "cloudsigma": drive_cloudsigma,
    "smartos": drive_smartos,
    "vmware": drive_vmware,
    "azure": drive_azure,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="pkg/datasource")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    names = args.names or list(DRIVERS)
    stale = 0
    for name in names:
        drive = DRIVERS[name]
        tdir = os.path.join(args.root, name, "testdata")
        for c in sorted(os.listdir(tdir)):
            case = os.path.join(tdir, c)
            if not os.path.isdir(case) or c == "fuzz":
                continue
            out = drive(case)
            if out is None:  # a case upstream cannot be fed
                continue
            out = json.loads(json.dumps(plain(out)).replace(BASE_URL, "BASE"))
            got = json.dumps(out, indent=2, sort_keys=True) + "\n"
            dst = os.path.join(case, GOLDEN)
            if args.check:
                old = open(dst).read() if os.path.exists(dst) else ""
                if old != got:
                    print("stale: %s" % dst)
                    stale += 1
                continue
            with open(dst, "w") as f:
                f.write(got)
            print("%s: found=%s" % (dst, out["found"]))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
