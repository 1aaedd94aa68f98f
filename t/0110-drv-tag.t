#!/bin/sh
# drv-tag.sh: one node's tag, one kubectl call, and no silent failure.
# (t/0900-e2e-*.t runs it against the sandbox's real API server.)
. "$(dirname "$0")/lib.sh"

t_fake_kubectl
FAKE_OUT=$DATA/node-1.json
export FAKE_OUT

t_run dash "$BIN/drv-tag.sh" lab-node-1
t_rc 0 "a node with all its labels, under dash"
t_out "prints exactly its tag, one line" 535-5.15.0-107-generic-ubuntu22.04
t_err "nothing on stderr"
t_run cat kubectl.log
t_out "makes one kubectl call, for that node, bounded in time, without discovery" "--request-timeout=60s get --raw /api/v1/nodes/lab-node-1"

t_run drv-tag.sh -b 550 lab-node-1
t_out "-b: the tag after a branch change" 550-5.15.0-107-generic-ubuntu22.04

mkdir elsewhere && cd elsewhere || exit 1
t_run "$BIN/drv-tag.sh" lab-node-1
t_rc 0 "works from another directory"
cd .. || exit 1

STANDIN_FAULT=notfound t_run drv-tag.sh lab-node-9
t_rc 2 "a node that does not exist"
t_out "prints no tag"
t_err "says so" "drv-tag.sh: node lab-node-9 not found in the cluster"

STANDIN_FAULT=down t_run drv-tag.sh lab-node-1
t_rc 2 "no API server"
t_out "prints no tag, never a strange one"
t_err "relays what kubectl said" \
	"drv-tag.sh: cannot read node lab-node-1 from the cluster; kubectl said:" \
	"    The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?"

sed 's/"nvidia.com\/cuda.driver.major": "535",//' "$DATA/node-1.json" >nomajor.json
FAKE_OUT=$PWD/nomajor.json t_run drv-tag.sh lab-node-1
t_rc 2 "a node without its driver label"
t_out "prints no tag"
t_err "names the node and the label" \
	"labels2tag: node lab-node-1: label nvidia.com/cuda.driver.major is missing (gpu-feature-discovery sets it: is it running there?)"

: >kubectl.log
t_run drv-tag.sh 'lab-node-1 -o yaml'
t_rc 2 "a node argument that is not a node name"
t_err "is refused before kubectl runs" "drv-tag.sh: not a node name: 'lab-node-1?-o?yaml'"
t_run cat kubectl.log
t_out "kubectl was not called"

# The answer must be that one node: a list of nodes (a proxy's cache, a
# wrong path) is not its tag, nor is another node.
FAKE_OUT=$DATA/lab-nodes.json t_run drv-tag.sh lab-node-1
t_rc 2 "a list of three nodes where one node was asked for"
t_err "says so, naming what it holds" \
	"drv-tag.sh: the API's answer for node lab-node-1 is not that one node (it holds: lab-node-0 lab-node-1 lab-node-2)"
t_out "and prints no tag"
FAKE_OUT=$DATA/node-1.json t_run drv-tag.sh lab-node-0
t_rc 2 "another node's answer"
t_err "says so" "drv-tag.sh: the API's answer for node lab-node-0 is not that one node (it holds: lab-node-1)"
: >empty.json
FAKE_OUT=$PWD/empty.json t_run drv-tag.sh lab-node-1
t_rc 2 "an empty answer (kubectl exit 0)"
t_out "prints no tag"

t_run drv-tag.sh
t_rc 2 "no node"
t_err "prints the usage" "usage: drv-tag.sh [-b branch] [-k kernel] node"
t_run drv-tag.sh -h
t_rc 0 "-h"

t_done
