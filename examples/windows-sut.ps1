# SUT control for Windows Server MSMQ (examples/windows.yaml): one action per call, the
# values as separate arguments (the target file's commands are argument lists, so nothing
# is quoted twice). Runs in PowerShell 7 on the machine that runs the suite and executes
# the action on $env:MQ_WINDOWS_HOST through PowerShell remoting (WinRM), where Windows
# PowerShell's System.Messaging talks to the local queue manager. Exit 0 on success; any
# failure exits non-zero with one line on stderr, which the suite reports as inconclusive.
#
#   pwsh -File windows-sut.ps1 create_queue 'private$\mqc-1-2' true 'a label' false
#   pwsh -File windows-sut.ps1 send_message 'private$\mqc-1-2' 68656c6c6f greeting 3
#   pwsh -File windows-sut.ps1 delete_queue 'private$\mqc-1-2'
#   pwsh -File windows-sut.ps1 reset          # removes every queue the suite made (mqc-*)
param(
    [Parameter(Mandatory = $true, Position = 0)][string]$Action,
    [Parameter(Position = 1, ValueFromRemainingArguments = $true)][string[]]$Values
)
$ErrorActionPreference = 'Stop'
if (-not $env:MQ_WINDOWS_HOST) {
    [Console]::Error.WriteLine('windows-sut.ps1: set MQ_WINDOWS_HOST to the MSMQ server')
    exit 2
}

$remote = {
    param([string]$Action, [string[]]$Values)
    $ErrorActionPreference = 'Stop'
    Add-Type -AssemblyName System.Messaging
    function Local([string]$Path) { '.\' + $Path }
    switch ($Action) {
        'create_queue' {
            $q = [System.Messaging.MessageQueue]::Create((Local $Values[0]), $Values[1] -eq 'true')
            if ($Values.Count -gt 2 -and $Values[2]) { $q.Label = $Values[2] }
            # the queue's Journaling: received messages are copied to its queue journal
            if ($Values.Count -gt 3) { $q.UseJournalQueue = ($Values[3] -eq 'true') }
        }
        'delete_queue' {
            if ([System.Messaging.MessageQueue]::Exists((Local $Values[0]))) {
                [System.Messaging.MessageQueue]::Delete((Local $Values[0]))
            }
        }
        'send_message' {
            $q = New-Object System.Messaging.MessageQueue (Local $Values[0])
            $hex = $Values[1]
            $bytes = [byte[]]::new($hex.Length / 2)
            for ($i = 0; $i -lt $bytes.Length; $i++) {
                $bytes[$i] = [Convert]::ToByte($hex.Substring(2 * $i, 2), 16)
            }
            $m = New-Object System.Messaging.Message
            $m.BodyStream = New-Object System.IO.MemoryStream (, $bytes)
            $m.Label = $Values[2]
            $m.Priority = [System.Messaging.MessagePriority][int]$Values[3]
            if ($q.Transactional) {
                $q.Send($m, [System.Messaging.MessageQueueTransactionType]::Single)
            } else {
                $q.Send($m)
            }
        }
        'reset' {
            foreach ($q in [System.Messaging.MessageQueue]::GetPrivateQueuesByMachine('.')) {
                if ($q.QueueName -like 'private$\mqc-*') {
                    [System.Messaging.MessageQueue]::Delete($q.Path)
                }
            }
        }
        default { throw "unknown action $Action" }
    }
}

try {
    Invoke-Command -ComputerName $env:MQ_WINDOWS_HOST -ScriptBlock $remote `
        -ArgumentList $Action, $Values
} catch {
    [Console]::Error.WriteLine("windows-sut.ps1 ${Action}: $($_.Exception.Message)")
    exit 1
}
