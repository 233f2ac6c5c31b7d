// leaseinterop decodes subnet leases the way flanneld does: Go's encoding/json into structs
// written from flannel's documented lease format (pkg/lease LeaseAttrs, the vxlan backend's
// lease attributes, pkg/ip's IP4/IP6 JSON forms and the subnet key pattern). It reads lines
// "KEY<TAB>VALUE" on stdin and prints, per line, what flanneld would see:
//
//	OK subnet=10.5.1.0/24 ipv6subnet=- public=192.168.0.2 publicv6=- type=vxlan vni=1 mac=aa:.. v6vni=- v6mac=-
//
// or "ERR <reason>". Unknown JSON keys are refused (flanneld ignores them; a key jcni writes that
// flannel does not know is a mistake worth seeing). Standard library only: builds in GOPATH mode.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
)

// IP4 is an IPv4 address written as a JSON string, as flannel's ip.IP4.
type IP4 net.IP

func (ip *IP4) UnmarshalJSON(j []byte) error {
	var s string
	if err := json.Unmarshal(j, &s); err != nil {
		return fmt.Errorf("PublicIP: %v", err)
	}
	p := net.ParseIP(s)
	if p == nil || p.To4() == nil {
		return fmt.Errorf("PublicIP: not an IPv4 address: %q", s)
	}
	*ip = IP4(p.To4())
	return nil
}

// IP6 is an IPv6 address written as a JSON string, as flannel's ip.IP6.
type IP6 net.IP

func (ip *IP6) UnmarshalJSON(j []byte) error {
	var s string
	if err := json.Unmarshal(j, &s); err != nil {
		return fmt.Errorf("PublicIPv6: %v", err)
	}
	p := net.ParseIP(s)
	if p == nil || p.To4() != nil {
		return fmt.Errorf("PublicIPv6: not an IPv6 address: %q", s)
	}
	*ip = IP6(p)
	return nil
}

// LeaseAttrs is the value of a lease key.
type LeaseAttrs struct {
	PublicIP      IP4
	PublicIPv6    *IP6
	BackendType   string          `json:",omitempty"`
	BackendData   json.RawMessage `json:",omitempty"`
	BackendV6Data json.RawMessage `json:",omitempty"`
}

// HardwareAddr is a MAC address written as a JSON string, as the vxlan backend writes VtepMAC.
type HardwareAddr net.HardwareAddr

func (a *HardwareAddr) UnmarshalJSON(j []byte) error {
	var s string
	if err := json.Unmarshal(j, &s); err != nil {
		return err
	}
	m, err := net.ParseMAC(s)
	if err != nil {
		return err
	}
	*a = HardwareAddr(m)
	return nil
}

// VxlanLeaseAttrs is the vxlan backend's BackendData (and BackendV6Data).
type VxlanLeaseAttrs struct {
	VNI     uint16
	VtepMAC HardwareAddr
}

// The subnet key: "10.5.1.0-24", or dual-stack "10.5.1.0-24&fc00:0:0:1::-64" (flannel's subnetRegex).
var subnetKey = regexp.MustCompile(`(\d+\.\d+.\d+.\d+)-(\d+)(?:&([a-f\d:]+)-(\d+))?$`)

func strict(data []byte, v interface{}) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

func decode(key, value string) string {
	m := subnetKey.FindStringSubmatch(key)
	if m == nil {
		return "ERR key " + key + " is not a subnet key"
	}
	subnet, v6subnet := m[1]+"/"+m[2], "-"
	if m[3] != "" {
		v6subnet = m[3] + "/" + m[4]
	}
	if _, _, err := net.ParseCIDR(subnet); err != nil {
		return "ERR subnet: " + err.Error()
	}
	var attrs LeaseAttrs
	if err := strict([]byte(value), &attrs); err != nil {
		return "ERR attrs: " + err.Error()
	}
	out := fmt.Sprintf("OK subnet=%s ipv6subnet=%s public=%s", subnet, v6subnet, net.IP(attrs.PublicIP))
	if attrs.PublicIPv6 != nil {
		out += " publicv6=" + net.IP(*attrs.PublicIPv6).String()
	} else {
		out += " publicv6=-"
	}
	out += " type=" + attrs.BackendType
	for _, b := range []struct {
		name string
		raw  json.RawMessage
	}{{"", attrs.BackendData}, {"v6", attrs.BackendV6Data}} {
		if len(b.raw) == 0 || string(b.raw) == "null" || attrs.BackendType != "vxlan" {
			out += fmt.Sprintf(" %svni=- %smac=-", b.name, b.name)
			continue
		}
		var vx VxlanLeaseAttrs
		if err := strict(b.raw, &vx); err != nil {
			return "ERR Backend" + strings.ToUpper(b.name) + "Data: " + err.Error()
		}
		out += fmt.Sprintf(" %svni=%d %smac=%s", b.name, vx.VNI, b.name, net.HardwareAddr(vx.VtepMAC))
	}
	return out
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		parts := strings.SplitN(in.Text(), "\t", 2)
		if len(parts) != 2 {
			fmt.Println("ERR line without a tab")
			continue
		}
		fmt.Println(decode(parts[0], parts[1]))
	}
}
