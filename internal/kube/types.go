package kube

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// The types below are a minimal copy of the Kubernetes API objects kube play
// reads, so that the run path does not link k8s.io/api (10 MB of binary and
// 6.6 MB of RSS at start, see docs/BENCHMARKS.md). Every field the API
// defines is listed, so that strictCheck can tell a known field podvisor does
// not honour (a warning, or a refusal) from a misspelt one (an error). Fields
// podvisor never reads are yaml.Node (a value: yaml.v3 cannot decode into
// a *yaml.Node field): present or not, anything goes inside.

// Object is one document: a workload, a ConfigMap, a Secret or a List.
type Object struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   ObjectMeta `yaml:"metadata"`
	Spec       yaml.Node  `yaml:"spec"` // decoded per kind
	Status     yaml.Node  `yaml:"status"`
	// ConfigMap and Secret
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	BinaryData map[string]string `yaml:"binaryData"`
	Immutable  yaml.Node         `yaml:"immutable"`
	Type       string            `yaml:"type"`
	// List
	Items []yaml.Node `yaml:"items"`
}

// ObjectMeta is metadata.
type ObjectMeta struct {
	Name                       string            `yaml:"name"`
	Namespace                  string            `yaml:"namespace"`
	UID                        string            `yaml:"uid"`
	Labels                     map[string]string `yaml:"labels"`
	Annotations                map[string]string `yaml:"annotations"`
	GenerateName               yaml.Node         `yaml:"generateName"`
	ResourceVersion            yaml.Node         `yaml:"resourceVersion"`
	Generation                 yaml.Node         `yaml:"generation"`
	CreationTimestamp          yaml.Node         `yaml:"creationTimestamp"`
	DeletionTimestamp          yaml.Node         `yaml:"deletionTimestamp"`
	DeletionGracePeriodSeconds yaml.Node         `yaml:"deletionGracePeriodSeconds"`
	OwnerReferences            yaml.Node         `yaml:"ownerReferences"`
	Finalizers                 yaml.Node         `yaml:"finalizers"`
	ManagedFields              yaml.Node         `yaml:"managedFields"`
	SelfLink                   yaml.Node         `yaml:"selfLink"`
}

// WorkloadSpec is the union of the specs of Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job and CronJob; allowedSpecKeys narrows it per kind.
type WorkloadSpec struct {
	Template     *PodTemplate `yaml:"template"`
	JobTemplate  *JobTemplate `yaml:"jobTemplate"`
	BackoffLimit *int         `yaml:"backoffLimit"`

	Replicas                             yaml.Node `yaml:"replicas"`
	Selector                             yaml.Node `yaml:"selector"`
	Strategy                             yaml.Node `yaml:"strategy"`
	MinReadySeconds                      yaml.Node `yaml:"minReadySeconds"`
	RevisionHistoryLimit                 yaml.Node `yaml:"revisionHistoryLimit"`
	Paused                               yaml.Node `yaml:"paused"`
	ProgressDeadlineSeconds              yaml.Node `yaml:"progressDeadlineSeconds"`
	ServiceName                          yaml.Node `yaml:"serviceName"`
	VolumeClaimTemplates                 yaml.Node `yaml:"volumeClaimTemplates"`
	PodManagementPolicy                  yaml.Node `yaml:"podManagementPolicy"`
	UpdateStrategy                       yaml.Node `yaml:"updateStrategy"`
	PersistentVolumeClaimRetentionPolicy yaml.Node `yaml:"persistentVolumeClaimRetentionPolicy"`
	Ordinals                             yaml.Node `yaml:"ordinals"`
	Parallelism                          yaml.Node `yaml:"parallelism"`
	Completions                          yaml.Node `yaml:"completions"`
	ActiveDeadlineSeconds                yaml.Node `yaml:"activeDeadlineSeconds"`
	BackoffLimitPerIndex                 yaml.Node `yaml:"backoffLimitPerIndex"`
	MaxFailedIndexes                     yaml.Node `yaml:"maxFailedIndexes"`
	ManualSelector                       yaml.Node `yaml:"manualSelector"`
	TTLSecondsAfterFinished              yaml.Node `yaml:"ttlSecondsAfterFinished"`
	CompletionMode                       yaml.Node `yaml:"completionMode"`
	Suspend                              yaml.Node `yaml:"suspend"`
	PodFailurePolicy                     yaml.Node `yaml:"podFailurePolicy"`
	PodReplacementPolicy                 yaml.Node `yaml:"podReplacementPolicy"`
	SuccessPolicy                        yaml.Node `yaml:"successPolicy"`
	ManagedBy                            yaml.Node `yaml:"managedBy"`
	Scheduling                           yaml.Node `yaml:"scheduling"`
	Schedule                             yaml.Node `yaml:"schedule"`
	TimeZone                             yaml.Node `yaml:"timeZone"`
	StartingDeadlineSeconds              yaml.Node `yaml:"startingDeadlineSeconds"`
	ConcurrencyPolicy                    yaml.Node `yaml:"concurrencyPolicy"`
	SuccessfulJobsHistoryLimit           yaml.Node `yaml:"successfulJobsHistoryLimit"`
	FailedJobsHistoryLimit               yaml.Node `yaml:"failedJobsHistoryLimit"`
}

// allowedSpecKeys are the spec keys each workload kind defines.
var allowedSpecKeys = map[string][]string{
	"Deployment":  {"template", "replicas", "selector", "strategy", "minReadySeconds", "revisionHistoryLimit", "paused", "progressDeadlineSeconds"},
	"ReplicaSet":  {"template", "replicas", "selector", "minReadySeconds"},
	"StatefulSet": {"template", "replicas", "selector", "serviceName", "volumeClaimTemplates", "podManagementPolicy", "updateStrategy", "revisionHistoryLimit", "minReadySeconds", "persistentVolumeClaimRetentionPolicy", "ordinals"},
	"DaemonSet":   {"template", "selector", "updateStrategy", "minReadySeconds", "revisionHistoryLimit"},
	"Job":         {"template", "parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector", "manualSelector", "ttlSecondsAfterFinished", "completionMode", "suspend", "podFailurePolicy", "podReplacementPolicy", "successPolicy", "managedBy", "scheduling"},
	"CronJob":     {"jobTemplate", "schedule", "timeZone", "startingDeadlineSeconds", "concurrencyPolicy", "suspend", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"},
}

// PodTemplate is a workload's spec.template.
type PodTemplate struct {
	Metadata ObjectMeta `yaml:"metadata"`
	Spec     PodSpec    `yaml:"spec"`
}

// JobTemplate is a CronJob's spec.jobTemplate.
type JobTemplate struct {
	Metadata ObjectMeta   `yaml:"metadata"`
	Spec     WorkloadSpec `yaml:"spec"`
}

// PodSpec is a pod's spec.
type PodSpec struct {
	Volumes                       []Volume            `yaml:"volumes"`
	InitContainers                []Container         `yaml:"initContainers"`
	Containers                    []Container         `yaml:"containers"`
	RestartPolicy                 string              `yaml:"restartPolicy"`
	TerminationGracePeriodSeconds *int64              `yaml:"terminationGracePeriodSeconds"`
	ServiceAccountName            string              `yaml:"serviceAccountName"`
	ServiceAccount                yaml.Node           `yaml:"serviceAccount"`
	NodeName                      string              `yaml:"nodeName"`
	Hostname                      yaml.Node           `yaml:"hostname"`
	Subdomain                     string              `yaml:"subdomain"`         // the pod's FQDN (cmd/podvisor)
	SetHostnameAsFQDN             bool                `yaml:"setHostnameAsFQDN"` // its hostname the FQDN
	SecurityContext               *PodSecurityContext `yaml:"securityContext"`

	EphemeralContainers          yaml.Node `yaml:"ephemeralContainers"`
	ActiveDeadlineSeconds        yaml.Node `yaml:"activeDeadlineSeconds"`
	DNSPolicy                    yaml.Node `yaml:"dnsPolicy"`
	NodeSelector                 yaml.Node `yaml:"nodeSelector"`
	AutomountServiceAccountToken yaml.Node `yaml:"automountServiceAccountToken"`
	HostNetwork                  yaml.Node `yaml:"hostNetwork"`
	HostPID                      yaml.Node `yaml:"hostPID"`
	HostIPC                      yaml.Node `yaml:"hostIPC"`
	ShareProcessNamespace        yaml.Node `yaml:"shareProcessNamespace"`
	ImagePullSecrets             yaml.Node `yaml:"imagePullSecrets"`
	Affinity                     yaml.Node `yaml:"affinity"`
	SchedulerName                yaml.Node `yaml:"schedulerName"`
	Tolerations                  yaml.Node `yaml:"tolerations"`
	HostAliases                  yaml.Node `yaml:"hostAliases"`
	PriorityClassName            yaml.Node `yaml:"priorityClassName"`
	Priority                     yaml.Node `yaml:"priority"`
	DNSConfig                    yaml.Node `yaml:"dnsConfig"`
	ReadinessGates               yaml.Node `yaml:"readinessGates"`
	RuntimeClassName             yaml.Node `yaml:"runtimeClassName"`
	EnableServiceLinks           yaml.Node `yaml:"enableServiceLinks"`
	PreemptionPolicy             yaml.Node `yaml:"preemptionPolicy"`
	Overhead                     yaml.Node `yaml:"overhead"`
	TopologySpreadConstraints    yaml.Node `yaml:"topologySpreadConstraints"`
	OS                           *PodOS    `yaml:"os"`
	HostUsers                    yaml.Node `yaml:"hostUsers"`
	SchedulingGates              yaml.Node `yaml:"schedulingGates"`
	ResourceClaims               yaml.Node `yaml:"resourceClaims"`
	Resources                    yaml.Node `yaml:"resources"`
	HostnameOverride             yaml.Node `yaml:"hostnameOverride"`
	EvictionResponders           yaml.Node `yaml:"evictionResponders"`
	SchedulingGroup              yaml.Node `yaml:"schedulingGroup"`
}

// PodSecurityContext is spec.securityContext.
type PodSecurityContext struct {
	RunAsUser  *int64 `yaml:"runAsUser"`
	RunAsGroup *int64 `yaml:"runAsGroup"`

	RunAsNonRoot             yaml.Node `yaml:"runAsNonRoot"`
	FSGroup                  yaml.Node `yaml:"fsGroup"`
	FSGroupChangePolicy      yaml.Node `yaml:"fsGroupChangePolicy"`
	SupplementalGroups       yaml.Node `yaml:"supplementalGroups"`
	SupplementalGroupsPolicy yaml.Node `yaml:"supplementalGroupsPolicy"`
	Sysctls                  yaml.Node `yaml:"sysctls"`
	SeccompProfile           yaml.Node `yaml:"seccompProfile"`
	SELinuxOptions           yaml.Node `yaml:"seLinuxOptions"`
	SELinuxChangePolicy      yaml.Node `yaml:"seLinuxChangePolicy"`
	WindowsOptions           yaml.Node `yaml:"windowsOptions"`
	AppArmorProfile          yaml.Node `yaml:"appArmorProfile"`
}

// Container is one entry of containers or initContainers.
type Container struct {
	Name            string           `yaml:"name"`
	Image           string           `yaml:"image"`
	Command         []string         `yaml:"command"`
	Args            []string         `yaml:"args"`
	WorkingDir      string           `yaml:"workingDir"`
	Ports           []ContainerPort  `yaml:"ports"`
	EnvFrom         []EnvFromSource  `yaml:"envFrom"`
	Env             []EnvVar         `yaml:"env"`
	Resources       *Resources       `yaml:"resources"`
	RestartPolicy   string           `yaml:"restartPolicy"`
	VolumeMounts    []VolumeMount    `yaml:"volumeMounts"`
	LivenessProbe   *Probe           `yaml:"livenessProbe"`
	ReadinessProbe  *Probe           `yaml:"readinessProbe"`
	StartupProbe    *Probe           `yaml:"startupProbe"`
	Lifecycle       *Lifecycle       `yaml:"lifecycle"`
	SecurityContext *SecurityContext `yaml:"securityContext"`

	ResizePolicy             yaml.Node     `yaml:"resizePolicy"`
	RestartPolicyRules       []RestartRule `yaml:"restartPolicyRules"`
	VolumeDevices            yaml.Node     `yaml:"volumeDevices"`
	TerminationMessagePath   yaml.Node     `yaml:"terminationMessagePath"`
	TerminationMessagePolicy yaml.Node     `yaml:"terminationMessagePolicy"`
	ImagePullPolicy          yaml.Node     `yaml:"imagePullPolicy"`
	Stdin                    yaml.Node     `yaml:"stdin"`
	StdinOnce                yaml.Node     `yaml:"stdinOnce"`
	TTY                      yaml.Node     `yaml:"tty"`
}

// Resources is a container's resources.
type Resources struct {
	Limits   map[string]Quantity `yaml:"limits"`
	Requests map[string]Quantity `yaml:"requests"`
	Claims   yaml.Node           `yaml:"claims"`
}

// ContainerPort is one of a container's ports.
type ContainerPort struct {
	Name          string    `yaml:"name"`
	ContainerPort int       `yaml:"containerPort"`
	HostPort      yaml.Node `yaml:"hostPort"`
	Protocol      string    `yaml:"protocol"`
	HostIP        yaml.Node `yaml:"hostIP"`
}

// SecurityContext is a container's securityContext.
type SecurityContext struct {
	RunAsUser  *int64 `yaml:"runAsUser"`
	RunAsGroup *int64 `yaml:"runAsGroup"`

	RunAsNonRoot             yaml.Node `yaml:"runAsNonRoot"`
	Privileged               yaml.Node `yaml:"privileged"`
	Capabilities             yaml.Node `yaml:"capabilities"`
	ReadOnlyRootFilesystem   yaml.Node `yaml:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation yaml.Node `yaml:"allowPrivilegeEscalation"`
	SeccompProfile           yaml.Node `yaml:"seccompProfile"`
	SELinuxOptions           yaml.Node `yaml:"seLinuxOptions"`
	ProcMount                yaml.Node `yaml:"procMount"`
	WindowsOptions           yaml.Node `yaml:"windowsOptions"`
	AppArmorProfile          yaml.Node `yaml:"appArmorProfile"`
}

// EnvVar is one entry of env.
type EnvVar struct {
	Name      string        `yaml:"name"`
	Value     string        `yaml:"value"`
	ValueFrom *EnvVarSource `yaml:"valueFrom"`
}

// EnvVarSource is env[].valueFrom.
type EnvVarSource struct {
	FieldRef         *FieldRef         `yaml:"fieldRef"`
	ResourceFieldRef *ResourceFieldRef `yaml:"resourceFieldRef"`
	ConfigMapKeyRef  *KeyRef           `yaml:"configMapKeyRef"`
	SecretKeyRef     *KeyRef           `yaml:"secretKeyRef"`
	FileKeyRef       *FileKeyRef       `yaml:"fileKeyRef"`
}

// FileKeyRef is valueFrom.fileKeyRef (KEP-3721): a key of an env file in
// one of the pod's volumes, read when the container starts.
type FileKeyRef struct {
	VolumeName string `yaml:"volumeName"`
	Path       string `yaml:"path"`
	Key        string `yaml:"key"`
	Optional   *bool  `yaml:"optional"`
}

// PodOS is spec.os.
type PodOS struct {
	Name string `yaml:"name"`
}

// RestartRule is one of a container's restartPolicyRules (KEP-5307).
type RestartRule struct {
	Action    string                `yaml:"action"`
	ExitCodes *RestartRuleExitCodes `yaml:"exitCodes"`
}

// RestartRuleExitCodes is a restart rule's exitCodes.
type RestartRuleExitCodes struct {
	Operator string  `yaml:"operator"`
	Values   []int32 `yaml:"values"`
}

// FieldRef is valueFrom.fieldRef.
type FieldRef struct {
	APIVersion string `yaml:"apiVersion"`
	FieldPath  string `yaml:"fieldPath"`
}

// ResourceFieldRef is valueFrom.resourceFieldRef.
type ResourceFieldRef struct {
	ContainerName string   `yaml:"containerName"`
	Resource      string   `yaml:"resource"`
	Divisor       Quantity `yaml:"divisor"`
}

// KeyRef is configMapKeyRef or secretKeyRef.
type KeyRef struct {
	Name     string `yaml:"name"`
	Key      string `yaml:"key"`
	Optional bool   `yaml:"optional"`
}

// EnvFromSource is one entry of envFrom.
type EnvFromSource struct {
	Prefix       string   `yaml:"prefix"`
	ConfigMapRef *NameRef `yaml:"configMapRef"`
	SecretRef    *NameRef `yaml:"secretRef"`
}

// NameRef names a ConfigMap or Secret.
type NameRef struct {
	Name     string `yaml:"name"`
	Optional bool   `yaml:"optional"`
}

// VolumeMount is one entry of volumeMounts.
type VolumeMount struct {
	Name              string    `yaml:"name"`
	MountPath         string    `yaml:"mountPath"`
	SubPath           string    `yaml:"subPath"`
	ReadOnly          bool      `yaml:"readOnly"`
	MountPropagation  yaml.Node `yaml:"mountPropagation"`
	SubPathExpr       yaml.Node `yaml:"subPathExpr"`
	RecursiveReadOnly yaml.Node `yaml:"recursiveReadOnly"`
	BindMountOptions  yaml.Node `yaml:"bindMountOptions"`
}

// Volume is one entry of spec.volumes.
// ImageVolume is an image volume's source (KEP-4639): the image's
// content, read-only.
type ImageVolume struct {
	Reference  string `yaml:"reference"`
	PullPolicy string `yaml:"pullPolicy"`
}

type Volume struct {
	Name      string           `yaml:"name"`
	EmptyDir  *EmptyDir        `yaml:"emptyDir"`
	HostPath  *HostPath        `yaml:"hostPath"`
	ConfigMap *ConfigMapVolume `yaml:"configMap"`
	Secret    *SecretVolume    `yaml:"secret"`

	PersistentVolumeClaim yaml.Node          `yaml:"persistentVolumeClaim"`
	Projected             *ProjectedVolume   `yaml:"projected"`
	DownwardAPI           *DownwardAPIVolume `yaml:"downwardAPI"`

	Ephemeral            yaml.Node    `yaml:"ephemeral"`
	Image                *ImageVolume `yaml:"image"`
	NFS                  yaml.Node    `yaml:"nfs"`
	CSI                  yaml.Node    `yaml:"csi"`
	ISCSI                yaml.Node    `yaml:"iscsi"`
	FC                   yaml.Node    `yaml:"fc"`
	GitRepo              yaml.Node    `yaml:"gitRepo"`
	AWSElasticBlockStore yaml.Node    `yaml:"awsElasticBlockStore"`
	GCEPersistentDisk    yaml.Node    `yaml:"gcePersistentDisk"`
	AzureDisk            yaml.Node    `yaml:"azureDisk"`
	AzureFile            yaml.Node    `yaml:"azureFile"`
	CephFS               yaml.Node    `yaml:"cephfs"`
	RBD                  yaml.Node    `yaml:"rbd"`
	Cinder               yaml.Node    `yaml:"cinder"`
	Flocker              yaml.Node    `yaml:"flocker"`
	FlexVolume           yaml.Node    `yaml:"flexVolume"`
	Glusterfs            yaml.Node    `yaml:"glusterfs"`
	Quobyte              yaml.Node    `yaml:"quobyte"`
	VsphereVolume        yaml.Node    `yaml:"vsphereVolume"`
	PhotonPersistentDisk yaml.Node    `yaml:"photonPersistentDisk"`
	PortworxVolume       yaml.Node    `yaml:"portworxVolume"`
	ScaleIO              yaml.Node    `yaml:"scaleIO"`
	StorageOS            yaml.Node    `yaml:"storageos"`
}

// EmptyDir is volumes[].emptyDir.
type EmptyDir struct {
	Medium    string    `yaml:"medium"`
	SizeLimit yaml.Node `yaml:"sizeLimit"`
	Mode      yaml.Node `yaml:"mode"`
}

// HostPath is volumes[].hostPath.
type HostPath struct {
	Path string `yaml:"path"`
	Type string `yaml:"type"`
}

// KeyToPath is one entry of a configMap or secret volume's items.
type KeyToPath struct {
	Key  string    `yaml:"key"`
	Path string    `yaml:"path"`
	Mode *int32    `yaml:"mode"`
	User yaml.Node `yaml:"user"`
}

// ConfigMapVolume is volumes[].configMap.
type ConfigMapVolume struct {
	Name        string      `yaml:"name"`
	Items       []KeyToPath `yaml:"items"`
	DefaultMode *int32      `yaml:"defaultMode"`
	Optional    bool        `yaml:"optional"`
	DefaultUser yaml.Node   `yaml:"defaultUser"`
}

// SecretVolume is volumes[].secret.
type SecretVolume struct {
	SecretName  string      `yaml:"secretName"`
	Items       []KeyToPath `yaml:"items"`
	DefaultMode *int32      `yaml:"defaultMode"`
	Optional    bool        `yaml:"optional"`
	DefaultUser yaml.Node   `yaml:"defaultUser"`
}

// DownwardAPIVolume is volumes[].downwardAPI.
type DownwardAPIVolume struct {
	Items       []DownwardAPIFile `yaml:"items"`
	DefaultMode *int32            `yaml:"defaultMode"`
	DefaultUser yaml.Node         `yaml:"defaultUser"`
}

// DownwardAPIFile is one file of a downwardAPI volume or projection.
type DownwardAPIFile struct {
	Path             string            `yaml:"path"`
	FieldRef         *FieldRef         `yaml:"fieldRef"`
	ResourceFieldRef *ResourceFieldRef `yaml:"resourceFieldRef"`
	Mode             *int32            `yaml:"mode"`
	User             yaml.Node         `yaml:"user"`
}

// ProjectedVolume is volumes[].projected.
type ProjectedVolume struct {
	Sources     []VolumeProjection `yaml:"sources"`
	DefaultMode *int32             `yaml:"defaultMode"`
	DefaultUser yaml.Node          `yaml:"defaultUser"`
}

// VolumeProjection is one source of a projected volume.
type VolumeProjection struct {
	Secret              *ObjectProjection      `yaml:"secret"`
	ConfigMap           *ObjectProjection      `yaml:"configMap"`
	DownwardAPI         *DownwardAPIProjection `yaml:"downwardAPI"`
	ServiceAccountToken *TokenProjection       `yaml:"serviceAccountToken"`
	ClusterTrustBundle  yaml.Node              `yaml:"clusterTrustBundle"`
	PodCertificate      yaml.Node              `yaml:"podCertificate"`
}

// ObjectProjection is a projected configMap or secret.
type ObjectProjection struct {
	Name     string      `yaml:"name"`
	Items    []KeyToPath `yaml:"items"`
	Optional bool        `yaml:"optional"`
}

// DownwardAPIProjection is a projected downwardAPI.
type DownwardAPIProjection struct {
	Items []DownwardAPIFile `yaml:"items"`
}

// TokenProjection is a projected serviceAccountToken.
type TokenProjection struct {
	Audience          string    `yaml:"audience"`
	ExpirationSeconds *int64    `yaml:"expirationSeconds"`
	Path              string    `yaml:"path"`
	User              yaml.Node `yaml:"user"`
}

// Probe is a startup, readiness or liveness probe.
type Probe struct {
	Exec                          *ExecAction      `yaml:"exec"`
	HTTPGet                       *HTTPGetAction   `yaml:"httpGet"`
	TCPSocket                     *TCPSocketAction `yaml:"tcpSocket"`
	GRPC                          *GRPCAction      `yaml:"grpc"`
	InitialDelaySeconds           int              `yaml:"initialDelaySeconds"`
	TimeoutSeconds                int              `yaml:"timeoutSeconds"`
	PeriodSeconds                 int              `yaml:"periodSeconds"`
	SuccessThreshold              int              `yaml:"successThreshold"`
	FailureThreshold              int              `yaml:"failureThreshold"`
	TerminationGracePeriodSeconds *int64           `yaml:"terminationGracePeriodSeconds"`
}

// ExecAction runs a command.
type ExecAction struct {
	Command []string `yaml:"command"`
}

// HTTPGetAction is an HTTP GET.
type HTTPGetAction struct {
	Path        string       `yaml:"path"`
	Port        IntOrString  `yaml:"port"`
	Host        string       `yaml:"host"`
	Scheme      string       `yaml:"scheme"`
	HTTPHeaders []HTTPHeader `yaml:"httpHeaders"`
	Protocol    string       `yaml:"protocol"` // HTTP1 (default) or HTTP2 (h2c; probes only)
}

// GRPCAction is a gRPC health check (grpc.health.v1).
type GRPCAction struct {
	Port    int     `yaml:"port"`
	Service *string `yaml:"service"`
	Mode    string  `yaml:"mode"` // Plaintext (default) or TLS, without a certificate check
}

// HTTPHeader is one header of an httpGet.
type HTTPHeader struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// TCPSocketAction connects to a port.
type TCPSocketAction struct {
	Port IntOrString `yaml:"port"`
	Host string      `yaml:"host"`
}

// SleepAction is a lifecycle sleep.
type SleepAction struct {
	Seconds int `yaml:"seconds"`
}

// Lifecycle is a container's lifecycle.
type Lifecycle struct {
	PostStart  *LifecycleHandler `yaml:"postStart"`
	PreStop    *LifecycleHandler `yaml:"preStop"`
	StopSignal string            `yaml:"stopSignal"`
}

// LifecycleHandler is a postStart or preStop hook.
type LifecycleHandler struct {
	Exec      *ExecAction      `yaml:"exec"`
	HTTPGet   *HTTPGetAction   `yaml:"httpGet"`
	TCPSocket *TCPSocketAction `yaml:"tcpSocket"`
	Sleep     *SleepAction     `yaml:"sleep"`
}

// IntOrString is a port given as a number or a name.
type IntOrString struct {
	Int    int
	Str    string
	IsName bool
}

// UnmarshalYAML accepts an integer or a string.
func (v *IntOrString) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a port number or name", n.Line)
	}
	if n.ShortTag() == "!!int" {
		i, err := strconv.Atoi(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %v", n.Line, err)
		}
		*v = IntOrString{Int: i}
		return nil
	}
	*v = IntOrString{Str: n.Value, IsName: true}
	return nil
}

// Quantity is a resource quantity as written ("500m", "128Mi", 2).
type Quantity string

// UnmarshalYAML accepts a number or a string.
func (q *Quantity) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a quantity such as 500m or 128Mi", n.Line)
	}
	*q = Quantity(n.Value)
	return nil
}
