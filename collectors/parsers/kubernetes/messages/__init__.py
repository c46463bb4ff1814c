"""The kubelet, controller and scheduler messages every Kubernetes reader shares, read one way everywhere."""
