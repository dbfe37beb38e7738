package regress

// iperfPort is the TCP port of the iperf3 servers (testbed and hosts).
const iperfPort = "5201"
